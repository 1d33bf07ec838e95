package schema

import (
	"errors"
	"math"
	"strings"
)

// Bootstring parameters of Punycode, RFC 3492 section 5.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
)

var errPunycode = errors.New("invalid punycode")

// decodePunycode decodes the part of an A-label after "xn--" (RFC 3492 section 6.2).
func decodePunycode(s string) ([]rune, error) {
	var out []rune
	b := strings.LastIndexByte(s, '-')
	if b > 0 {
		for i := 0; i < b; i++ {
			if s[i] >= 0x80 {
				return nil, errPunycode
			}
			out = append(out, rune(s[i]))
		}
		s = s[b+1:]
	} else if b == 0 {
		s = s[1:]
	}
	n, bias, i := punyInitialN, punyInitialBias, 0
	for len(s) > 0 {
		oldi, w := i, 1
		for k := punyBase; ; k += punyBase {
			if len(s) == 0 {
				return nil, errPunycode
			}
			digit, ok := punyDigit(s[0])
			s = s[1:]
			if !ok || digit > (math.MaxInt32-i)/w {
				return nil, errPunycode
			}
			i += digit * w
			t := min(max(k-bias, punyTMin), punyTMax)
			if digit < t {
				break
			}
			if w > math.MaxInt32/(punyBase-t) {
				return nil, errPunycode
			}
			w *= punyBase - t
		}
		bias = punyAdapt(i-oldi, len(out)+1, oldi == 0)
		if i/(len(out)+1) > math.MaxInt32-n {
			return nil, errPunycode
		}
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n > 0x10FFFF || n >= 0xD800 && n <= 0xDFFF {
			return nil, errPunycode
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return out, nil
}

func punyDigit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c-'0') + 26, true
	case c >= 'a' && c <= 'z':
		return int(c - 'a'), true
	case c >= 'A' && c <= 'Z':
		return int(c - 'A'), true
	}
	return 0, false
}

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}
