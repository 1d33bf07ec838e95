package tick

import (
	"math/bits"
	"strconv"
)

// skipValue validates the value at p.pos and moves past it, accepting
// exactly what value does (depth limit included, counting from p.depth)
// without building anything. It is one loop over the text with the open
// containers kept as bits, since it runs over every byte a replay reads.
// While p.collect is the depth of an object, its keys are recorded in
// p.keys, and p.collect becomes -1 if one of them has escapes.
func (p *parser) skipValue() error {
	src := p.src
	i := p.pos
	base := p.depth
	depth := base
	// Bit d-base-1 of objs tells whether the container at depth d is an
	// object (1) or an array (0).
	var objs [MaxDepth/64 + 1]uint64
	var c byte
	var bad string
value:
	i = skipSpace(src, i)
	if i >= len(src) {
		bad = "unexpected end of input"
		goto fail
	}
	c = src[i]
	switch {
	case c == '"':
		end, _ := scanString(src, i)
		if end < 0 {
			return p.stringError(i)
		}
		i = end
	case c == '{' || c == '[':
		if depth++; depth > MaxDepth {
			bad = "nesting deeper than " + strconv.Itoa(MaxDepth)
			goto fail
		}
		k := depth - base - 1
		i = skipSpace(src, i+1)
		if c == '[' {
			objs[k>>6] &^= 1 << (k & 63)
			if i < len(src) && src[i] == ']' {
				depth--
				i++
				goto after
			}
			goto value
		}
		objs[k>>6] |= 1 << (k & 63)
		if i < len(src) && src[i] == '}' {
			depth--
			i++
			goto after
		}
		goto key
	case c == '-' || (c >= '0' && c <= '9'):
		end, exact, msg := scanNumber(src, i)
		if msg != "" {
			i, bad = end, msg
			goto fail
		}
		if !exact {
			if _, err := strconv.ParseFloat(src[i:end], 64); err != nil {
				bad = "number out of range"
				goto fail
			}
		}
		i = end
	case c == 't' && len(src)-i >= 4 && src[i:i+4] == "true",
		c == 'n' && len(src)-i >= 4 && src[i:i+4] == "null":
		i += 4
	case c == 'f' && len(src)-i >= 5 && src[i:i+5] == "false":
		i += 5
	case c == 't' || c == 'f' || c == 'n':
		bad = "invalid literal"
		goto fail
	default:
		p.pos = i
		return p.errorf("unexpected character %q", c)
	}
after:
	if depth == base {
		p.pos = i
		return nil
	}
	i = skipSpace(src, i)
	if i >= len(src) {
		if k := depth - base - 1; objs[k>>6]&(1<<(k&63)) != 0 {
			bad = "unexpected end of input in object"
		} else {
			bad = "unexpected end of input in array"
		}
		goto fail
	}
	c = src[i]
	if k := depth - base - 1; objs[k>>6]&(1<<(k&63)) != 0 {
		switch c {
		case ',':
			i++
			goto key
		case '}':
			depth--
			i++
			goto after
		}
		bad = "expected ',' or '}'"
		goto fail
	}
	switch c {
	case ',':
		i++
		goto value
	case ']':
		depth--
		i++
		goto after
	}
	bad = "expected ',' or ']'"
	goto fail
key:
	i = skipSpace(src, i)
	if i >= len(src) || src[i] != '"' {
		bad = "expected a string key"
		goto fail
	}
	{
		end, esc := scanString(src, i)
		if end < 0 {
			return p.stringError(i)
		}
		if depth == p.collect {
			if esc {
				p.collect = -1
			} else {
				p.keys = append(p.keys, keySpan{int32(i), int32(end)})
			}
		}
		i = skipSpace(src, end)
	}
	if i >= len(src) || src[i] != ':' {
		bad = "expected ':'"
		goto fail
	}
	i++
	goto value
fail:
	p.pos = i
	return p.errorf("%s", bad)
}

// scanString validates the string whose quote is at i, as str reads it,
// and returns the position after the closing quote, or -1 if the string is
// not valid (stringError tells why). esc says it holds escapes. It is kept
// small because it runs for every string of every event.
func scanString(src string, i int) (end int, esc bool) {
	i++
	for {
		if i+8 <= len(src) {
			m := specialBytes(load64(src, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if i >= len(src) {
			return -1, esc
		}
		c := src[i]
		if c == '"' {
			return i + 1, esc
		}
		if c == '\\' {
			esc = true
			if i+1 >= len(src) {
				return -1, esc
			}
			switch src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if i+6 <= len(src) && isHex(src[i+2]) && isHex(src[i+3]) && isHex(src[i+4]) && isHex(src[i+5]) {
					i += 6
					continue
				}
			}
			return -1, esc
		}
		if c < 0x20 {
			return -1, esc
		}
		i++
	}
}

// stringError tells where and why the string whose quote is at i is not
// valid, as str reports it.
func (p *parser) stringError(i int) error {
	p.pos = i
	_, err := p.str()
	return err
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanNumber validates the grammar of the number at i and returns its end.
// exact says it needs no conversion to be known in range: no exponent and
// a few hundred digits at most.
func scanNumber(src string, i int) (end int, exact bool, bad string) {
	if src[i] == '-' {
		i++
	}
	start := i
	if i < len(src) && src[i] == '0' {
		i++
	} else {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i == start {
		return i, false, "invalid number"
	}
	exact = i-start <= 300
	if i < len(src) && src[i] == '.' {
		i++
		f := i
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
		if i == f {
			return i, false, "invalid number"
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		exact = false
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		f := i
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
		if i == f {
			return i, false, "invalid number"
		}
	}
	return i, exact, ""
}
