package ident

const uuidLen = 36

// uuidShaped reports whether s has the 8-4-4-4-12 hyphen layout, whatever its other characters:
// such an id can only be meant as a UUID, so its failures are reported as UUID failures.
func uuidShaped(s string) bool {
	return len(s) == uuidLen && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-'
}

// uuidMisspelled reports whether s is a UUID in a spelling identifiers.md does not accept
// (braces, or 32 hex digits without hyphens), so that the error can say a UUID was expected.
func uuidMisspelled(s string) bool {
	switch len(s) {
	case uuidLen + 2:
		return s[0] == '{' && s[len(s)-1] == '}' && uuidShaped(s[1:len(s)-1])
	case 32:
		for i := 0; i < len(s); i++ {
			if hexClass[s[i]] == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// canonicalUUID validates s as a v4 or v5 UUID and returns it lowercased. It returns s itself,
// without allocating, when s is already lowercase.
func canonicalUUID(s string) (string, error) {
	upper, err := checkUUID(s)
	if err != nil {
		return "", err
	}
	if !upper {
		return s, nil
	}
	var buf [uuidLen]byte
	copy(buf[:], s)
	lowerHex(buf[:])
	return string(buf[:]), nil
}

// checkUUID validates s as a v4 or v5 UUID and reports whether it has uppercase hex digits.
func checkUUID(s string) (upper bool, err error) {
	if !uuidShaped(s) {
		return false, ErrUUIDFormat
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			continue
		}
		switch hexClass[s[i]] {
		case 0:
			return false, ErrUUIDFormat
		case hexUpper:
			upper = true
		}
	}
	if v := s[14]; v != '4' && v != '5' {
		return false, ErrUUIDVersion
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
	default:
		return false, ErrUUIDVariant
	}
	return upper, nil
}

func lowerHex(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
}

const (
	hexLower = 1 // 0-9 and a-f
	hexUpper = 2 // A-F
)

// hexClass sorts every byte into not hex (0), hexLower or hexUpper, so the UUID check is one
// table load per character.
var hexClass = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = hexLower
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = hexLower
		t[c-'a'+'A'] = hexUpper
	}
	return t
}()
