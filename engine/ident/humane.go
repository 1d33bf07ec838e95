package ident

const humaneLen = 9

// humaneAlphabet is Crockford base32: the canonical characters of a humane code.
const humaneAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// humaneFold maps every byte to its canonical humane character, or to 0 where there is none.
// Lowercase folds to uppercase first, then I and L read as 1, O as 0 and U as V.
var humaneFold = func() (t [256]byte) {
	for i := 0; i < len(humaneAlphabet); i++ {
		c := humaneAlphabet[i]
		t[c] = c
		if 'A' <= c && c <= 'Z' {
			t[c+'a'-'A'] = c
		}
	}
	for _, m := range [...]struct{ from, to byte }{{'I', '1'}, {'L', '1'}, {'O', '0'}, {'U', 'V'}} {
		t[m.from] = m.to
		t[m.from+'a'-'A'] = m.to
	}
	return t
}()

// canonicalHumane normalizes s as a humane code. It returns s itself, without allocating, when
// s is already canonical.
func canonicalHumane(s string) (string, error) {
	if len(s) != humaneLen {
		return "", ErrHumane
	}
	changed := false
	for i := 0; i < len(s); i++ {
		c := humaneFold[s[i]]
		if c == 0 {
			return "", ErrHumane
		}
		changed = changed || c != s[i]
	}
	if !changed {
		return s, nil
	}
	var buf [humaneLen]byte
	for i := 0; i < len(s); i++ {
		buf[i] = humaneFold[s[i]]
	}
	return string(buf[:]), nil
}
