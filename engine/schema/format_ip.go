package schema

import "errors"

// validateIPv4 checks the ipv4 format: four decimal octets 0-255 in dotted form, without
// leading zeros, signs or any other notation inet_aton would accept.
func validateIPv4(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if !isDottedQuad(s) {
		return errors.New("not a dotted-quad IPv4 address")
	}
	return nil
}

func isDottedQuad(s string) bool {
	parts, val, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || val > 255 {
				return false
			}
			parts++
			val, digits = 0, 0
			continue
		}
		c := s[i]
		if !isDigit(c) || digits > 0 && val == 0 || digits == 3 {
			return false
		}
		val = val*10 + int(c-'0')
		digits++
	}
	return parts == 4
}
