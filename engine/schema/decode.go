package schema

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting is the deepest nesting of arrays and objects accepted, as in encoding/json.
const maxNesting = 10000

var (
	errTrailingData = errors.New("unexpected data after the JSON value")
	errTooDeep      = errors.New("nesting deeper than 10000 levels")
)

// decodeJSON parses one JSON value (RFC 8259) into map[string]any, []any, json.Number, string,
// bool and nil: what encoding/json produces with UseNumber, from the same inputs, including its
// replacement of invalid UTF-8 and lone surrogates by U+FFFD and its last-wins duplicate keys.
// It exists because it is several times faster than encoding/json on the write path.
func decodeJSON(raw []byte) (any, error) {
	return decodeJSONKeys(raw, nil)
}

// decodeJSONKeys is decodeJSON reusing the strings of keys for object keys equal to one, which
// spares an allocation per key when the keys are a schema's property names.
func decodeJSONKeys(raw []byte, keys map[string]string) (any, error) {
	p := jsonParser{src: raw, keys: keys}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(raw) {
		return nil, errTrailingData
	}
	return v, nil
}

type jsonParser struct {
	src   []byte
	pos   int
	depth int
	keys  map[string]string
	// text is src as one string, made at the first string or number: the plain ones are
	// substrings of it, one allocation for the document instead of one per value.
	text string
}

// substr returns src[i:j] as a string sharing text.
func (p *jsonParser) substr(i, j int) string {
	if len(p.text) != len(p.src) {
		p.text = string(p.src)
	}
	return p.text[i:j]
}

func (p *jsonParser) fail(what string) error {
	if p.pos >= len(p.src) {
		return errors.New("unexpected end of JSON input")
	}
	return errors.New("invalid character " + strconv.QuoteRune(rune(p.src[p.pos])) + " " + what + " at offset " + strconv.Itoa(p.pos))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	if p.pos >= len(p.src) {
		return nil, p.fail("")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.fail("looking for the beginning of a value")
}

func (p *jsonParser) literal(word string) error {
	if len(p.src)-p.pos < len(word) || string(p.src[p.pos:p.pos+len(word)]) != word {
		for i := 0; i < len(word) && p.pos < len(p.src) && p.src[p.pos] == word[i]; i++ {
			p.pos++
		}
		return p.fail("in literal " + word)
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return errTooDeep
	}
	p.pos++
	p.skipSpace()
	return nil
}

func (p *jsonParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if p.closes('}') {
		return obj, nil
	}
	for {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail("looking for the beginning of an object key")
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail("after an object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj[key] = v
		more, ok := p.next('}')
		if !ok {
			return nil, p.fail("after an object key:value pair")
		}
		if !more {
			return obj, nil
		}
	}
}

// closes leaves the container when the byte at p.pos is end, the one that closes it.
func (p *jsonParser) closes(end byte) bool {
	if p.pos < len(p.src) && p.src[p.pos] == end {
		p.pos++
		p.depth--
		return true
	}
	return false
}

// next reads what follows an object member or array element: a comma (more follows), or end,
// the byte that closes the container (which it leaves). ok is false for anything else.
func (p *jsonParser) next(end byte) (more, ok bool) {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ',' {
		p.pos++
		p.skipSpace()
		return true, true
	}
	return false, p.closes(end)
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	arr := make([]any, 0, 4)
	if p.closes(']') {
		return arr, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		more, ok := p.next(']')
		if !ok {
			return nil, p.fail("after an array element")
		}
		if !more {
			return arr, nil
		}
	}
}

// number reads a number and keeps its text.
func (p *jsonParser) number() (any, error) {
	start := p.pos
	if what := p.scanNumber(); what != "" {
		return nil, p.fail(what)
	}
	return json.Number(p.substr(start, p.pos)), nil
}

// scanNumber moves past -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?. It returns ""
// or, for a malformed number, where it broke, for the error message.
func (p *jsonParser) scanNumber() string {
	if p.src[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.src) && p.src[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		return "in numeric literal"
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return "after decimal point in numeric literal"
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return "in exponent of numeric literal"
		}
	}
	return ""
}

func (p *jsonParser) digits() int {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// key reads an object key, taken from keys when it is plain ASCII and known.
func (p *jsonParser) key() (string, error) {
	if p.keys != nil {
		start := p.pos + 1
		for i := start; i < len(p.src); i++ {
			c := p.src[i]
			if c == '"' {
				if k, ok := p.keys[string(p.src[start:i])]; ok {
					p.pos = i + 1
					return k, nil
				}
				break
			}
			if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
				break
			}
		}
	}
	return p.str()
}

// str reads a string; plain ASCII without escapes, the usual case, is a substring of text.
func (p *jsonParser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return p.substr(start, p.pos-1), nil
		case c == '\\' || c >= utf8.RuneSelf:
			return p.strSlow(start)
		case c < 0x20:
			return "", p.fail("in string literal")
		}
		p.pos++
	}
	return "", p.fail("")
}

func (p *jsonParser) strSlow(start int) (string, error) {
	buf := append(make([]byte, 0, p.pos-start+16), p.src[start:p.pos]...)
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("in string literal")
		case c == '\\':
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			p.pos += size
			buf = utf8.AppendRune(buf, r) // an invalid byte becomes U+FFFD
		}
	}
	return "", p.fail("")
}

func (p *jsonParser) escape(buf []byte) ([]byte, error) {
	p.pos++ // backslash
	if p.pos >= len(p.src) {
		return nil, p.fail("")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return nil, p.fail("in \\u hexadecimal character escape")
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate pairs with a following \u low surrogate; anything else is U+FFFD.
			if p.pos+1 < len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				if r2, ok := p.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						return utf8.AppendRune(buf, dec), nil
					}
				}
				p.pos = save
			}
			r = unicode.ReplacementChar
		}
		return utf8.AppendRune(buf, r), nil
	}
	p.pos--
	return nil, p.fail("in string escape code")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.src)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.src[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}
