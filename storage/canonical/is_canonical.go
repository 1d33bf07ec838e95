package canonical

import (
	"bytes"
	"unicode/utf8"
)

// IsCanonical reports whether src is already in canonical form, that is whether Canonicalize
// would return src itself. It allocates nothing, so a caller can keep src as it is, which is the
// common case for clients that send compact JSON with sorted keys. It may answer false for a few
// canonical texts (object keys holding escapes); Canonicalize gives the answer for those.
func IsCanonical(src []byte) bool {
	c := checker{src: src}
	return c.value() && c.pos == len(src)
}

// checker walks a text once, accepting only what Canonicalize would write unchanged.
type checker struct {
	src   []byte
	pos   int
	depth int
}

func (c *checker) value() bool {
	if c.pos >= len(c.src) {
		return false
	}
	switch b := c.src[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		return c.str(true)
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return false
}

func (c *checker) literal(word string) bool {
	if !bytes.HasPrefix(c.src[c.pos:], []byte(word)) {
		return false
	}
	c.pos += len(word)
	return true
}

func (c *checker) enter() bool {
	c.depth++
	c.pos++
	return c.depth <= MaxDepth
}

func (c *checker) array() bool {
	if !c.enter() {
		return false
	}
	if c.pos < len(c.src) && c.src[c.pos] == ']' {
		c.pos++
		c.depth--
		return true
	}
	for {
		if !c.value() || c.pos >= len(c.src) {
			return false
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
		case ']':
			c.pos++
			c.depth--
			return true
		default:
			return false
		}
	}
}

// object accepts members whose keys strictly increase. A key with an escape is refused: its
// raw bytes are not the unescaped bytes that the order is defined on.
func (c *checker) object() bool {
	if !c.enter() {
		return false
	}
	if c.pos < len(c.src) && c.src[c.pos] == '}' {
		c.pos++
		c.depth--
		return true
	}
	var prev []byte
	for i := 0; ; i++ {
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return false
		}
		start := c.pos + 1
		if !c.str(false) {
			return false
		}
		key := c.src[start : c.pos-1]
		if i > 0 && bytes.Compare(prev, key) >= 0 {
			return false
		}
		prev = key
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return false
		}
		c.pos++
		if !c.value() || c.pos >= len(c.src) {
			return false
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
		case '}':
			c.pos++
			c.depth--
			return true
		default:
			return false
		}
	}
}

// str accepts a string whose escapes are the ones Canonicalize writes; escapes are refused
// altogether when allowEscapes is false.
func (c *checker) str(allowEscapes bool) bool {
	c.pos++ // opening quote
	for {
		c.pos = safeRun(c.src, c.pos)
		if c.pos >= len(c.src) {
			return false
		}
		switch b := c.src[c.pos]; {
		case b == '"':
			c.pos++
			return true
		case b == '\\':
			if !allowEscapes || !c.escape() {
				return false
			}
		case b < utf8.RuneSelf:
			return false // a control character
		default:
			r, n := utf8.DecodeRune(c.src[c.pos:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			c.pos += n
		}
	}
}

// escape accepts the shortest escape of a character that must be escaped: \" \\ \b \f \n \r \t,
// or \u00xx in lowercase hex for the other control characters.
func (c *checker) escape() bool {
	if c.pos+1 >= len(c.src) {
		return false
	}
	switch c.src[c.pos+1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return true
	case 'u':
	default:
		return false
	}
	if c.pos+6 > len(c.src) {
		return false
	}
	h := c.src[c.pos+2 : c.pos+6]
	if h[0] != '0' || h[1] != '0' || (h[2] != '0' && h[2] != '1') || !isLowerHex(h[3]) {
		return false
	}
	v := (h[2]-'0')<<4 | unhex(h[3])
	switch v {
	case '\b', '\f', '\n', '\r', '\t':
		return false
	}
	c.pos += 6
	return true
}

func isLowerHex(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

func unhex(b byte) byte {
	if b <= '9' {
		return b - '0'
	}
	return b - 'a' + 10
}

// number accepts the JSON number grammar with a lowercase exponent marker and no '+' after it.
func (c *checker) number() bool {
	s, i := c.src, c.pos
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(s) && s[i] == 'e' {
		i++
		if i < len(s) && s[i] == '-' {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	c.pos = i
	return true
}
