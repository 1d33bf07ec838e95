package tick

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v as compact JSON, members in stored order. A missing
// Value is written as null.
func (v Value) AppendJSON(dst []byte) []byte {
	switch v.kind {
	case KindMissing, KindNull:
		return append(dst, "null"...)
	case KindBool:
		if v.num != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		return appendNumber(dst, v.num)
	case KindString:
		return appendString(dst, v.str)
	}
	if lz := v.n.lz; lz != nil && lz.verbatim {
		return appendVerbatimJSON(dst, lz)
	}
	if v.kind == KindArray {
		dst = append(dst, '[')
		for i, it := range v.n.m().items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = it.AppendJSON(dst)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, m := range v.n.m().members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.Key)
		dst = append(dst, ':')
		dst = m.Value.AppendJSON(dst)
	}
	return append(dst, '}')
}

// appendVerbatimJSON writes a lazy node whose text is what AppendJSON would
// write, and the items of its tail after those of the text.
func appendVerbatimJSON(dst []byte, lz *lazyText) []byte {
	if len(lz.tail) == 0 {
		return append(dst, lz.raw...)
	}
	dst = append(dst, lz.raw[:len(lz.raw)-1]...) // the text without its ']'
	empty := skipSpace(lz.raw, 1) == len(lz.raw)-1
	for i, it := range lz.tail {
		if i > 0 || !empty {
			dst = append(dst, ',')
		}
		dst = it.AppendJSON(dst)
	}
	return append(dst, ']')
}

// String returns v as compact JSON.
func (v Value) String() string { return string(v.AppendJSON(nil)) }

// MarshalJSON lets encoding/json embed a Value.
func (v Value) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil), nil }

// UnmarshalJSON lets encoding/json decode into a Value.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := ParseJSON(b)
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// appendNumber writes integers without a fraction or exponent, as
// JavaScript does, so timestamps and counts round-trip unchanged.
func appendNumber(dst []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if math.Abs(f) < 1<<53 {
			return strconv.AppendInt(dst, int64(f), 10)
		}
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs < 1e-6 || abs >= 1e21 {
		// Go writes "1.5e-07"; JavaScript, whose output j17 matches, "1.5e-7".
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		for i := start; i < len(dst); i++ {
			if dst[i] == 'e' && i+2 < len(dst) && dst[i+2] == '0' {
				return append(dst[:i+2], dst[i+3:]...)
			}
		}
		return dst
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s; invalid UTF-8 becomes U+FFFD so the output is
// always valid JSON.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
