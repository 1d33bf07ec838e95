package spec

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	default:
		return "an object"
	}
}

// node is one JSON value together with where it sits in the uploaded text, so that every
// problem found later can be reported with a line and column. Objects keep their members in
// document order, which makes error order and key iteration deterministic.
type node struct {
	kind    kind
	start   int // offset of the value's first byte
	end     int // offset just past the value's last byte
	str     string
	boolean bool
	members []member
	elems   []*node
}

type member struct {
	key   string
	keyAt int
	val   *node
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// keyOffset returns where key is written in an object node, or the node's start.
func (n *node) keyOffset(key string) int {
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].keyAt
		}
	}
	return n.start
}

// Limits on an uploaded spec (invariant: bad input cannot hurt).
const (
	// MaxSpecBytes is the largest spec document Load accepts.
	MaxSpecBytes = 4 << 20
	// maxDepth bounds the nesting of JSON values in a spec.
	maxDepth = 128
)

// syntaxError is a JSON syntax problem at a byte offset.
type syntaxError struct {
	off int
	msg string
}

// duplicate is a key written twice in one object.
type duplicate struct {
	ptr string
	off int
	key string
}

type parser struct {
	text  string
	pos   int
	depth int
	dups  []duplicate
	err   *syntaxError
	// path holds the reference tokens leading to the value being parsed, so that a duplicate
	// key can be reported with its pointer without building one for every value.
	path []pathToken
}

type pathToken struct {
	key   string
	index int // -1 for an object key
}

func (p *parser) pointer() string {
	var b strings.Builder
	for _, t := range p.path {
		b.WriteByte('/')
		if t.index >= 0 {
			b.WriteString(strconv.Itoa(t.index))
		} else {
			b.WriteString(escapePointer(t.key))
		}
	}
	return b.String()
}

// parseTree parses text into a node tree. It stops at the first syntax error, because after one
// the rest of the text cannot be located reliably; duplicate keys are collected and parsing goes on.
func parseTree(text string) (*node, []duplicate, *syntaxError) {
	p := &parser{text: text}
	p.skipSpace()
	n := p.value()
	if p.err == nil {
		p.skipSpace()
		if p.pos < len(p.text) {
			p.fail("unexpected text after the end of the document")
		}
	}
	if p.err != nil {
		return nil, nil, p.err
	}
	return n, p.dups, nil
}

func (p *parser) fail(msg string) {
	if p.err == nil {
		p.err = &syntaxError{off: p.pos, msg: msg}
	}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() *node {
	if p.pos >= len(p.text) {
		p.fail("unexpected end of the document; a value was expected")
		return nil
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.pos
		s, ok := p.string()
		if !ok {
			return nil
		}
		return &node{kind: kindString, start: start, end: p.pos, str: s}
	case c == 't':
		return p.literal("true", &node{kind: kindBool, boolean: true})
	case c == 'f':
		return p.literal("false", &node{kind: kindBool})
	case c == 'n':
		return p.literal("null", &node{kind: kindNull})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		p.fail("unexpected character " + strconv.QuoteRune(rune(c)) + "; a JSON value was expected")
		return nil
	}
}

func (p *parser) literal(word string, n *node) *node {
	if !strings.HasPrefix(p.text[p.pos:], word) {
		p.fail("invalid literal; expected " + word)
		return nil
	}
	n.start = p.pos
	p.pos += len(word)
	n.end = p.pos
	return n
}

func (p *parser) number() *node {
	start := p.pos
	if p.text[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.text) && p.text[p.pos] >= '0' && p.text[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if digits() == 0 {
		p.fail("invalid number")
		return nil
	}
	if p.text[intStart] == '0' && p.pos-intStart > 1 {
		p.pos = intStart
		p.fail("invalid number: leading zero")
		return nil
	}
	if p.pos < len(p.text) && p.text[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			p.fail("invalid number: digits expected after the decimal point")
			return nil
		}
	}
	if p.pos < len(p.text) && (p.text[p.pos] == 'e' || p.text[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.text) && (p.text[p.pos] == '+' || p.text[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			p.fail("invalid number: digits expected in the exponent")
			return nil
		}
	}
	return &node{kind: kindNumber, start: start, end: p.pos, str: p.text[start:p.pos]}
}

func (p *parser) string() (string, bool) {
	p.pos++ // opening quote
	var b *strings.Builder
	from := p.pos
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		switch {
		case c == '"':
			s := p.text[from:p.pos]
			if b != nil {
				b.WriteString(s)
				s = b.String()
			}
			p.pos++
			return s, true
		case c < 0x20:
			p.fail("control character in a string; escape it")
			return "", false
		case c == '\\':
			if b == nil {
				b = &strings.Builder{}
			}
			b.WriteString(p.text[from:p.pos])
			if !p.escape(b) {
				return "", false
			}
			from = p.pos
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.text[p.pos:])
			if r == utf8.RuneError && size == 1 {
				p.fail("invalid UTF-8 in a string")
				return "", false
			}
			p.pos += size
		}
	}
	p.fail("unterminated string")
	return "", false
}

func (p *parser) escape(b *strings.Builder) bool {
	p.pos++ // backslash
	if p.pos >= len(p.text) {
		p.fail("unterminated string")
		return false
	}
	c := p.text[p.pos]
	p.pos++
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return false
		}
		if utf16.IsSurrogate(r) {
			if strings.HasPrefix(p.text[p.pos:], `\u`) {
				p.pos += 2
				r2, ok := p.hex4()
				if !ok {
					return false
				}
				r = utf16.DecodeRune(r, r2)
			} else {
				r = utf8.RuneError
			}
		}
		b.WriteRune(r)
	default:
		p.pos--
		p.fail("invalid escape sequence in a string")
		return false
	}
	return true
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.text) {
		p.fail(`invalid \u escape`)
		return 0, false
	}
	v, err := strconv.ParseUint(p.text[p.pos:p.pos+4], 16, 32)
	if err != nil {
		p.fail(`invalid \u escape`)
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.fail("the document nests deeper than " + strconv.Itoa(maxDepth) + " levels")
		return false
	}
	return true
}

func (p *parser) object() *node {
	if !p.enter() {
		return nil
	}
	defer func() { p.depth-- }()
	n := &node{kind: kindObject, start: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		n.end = p.pos
		return n
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != '"' {
			p.fail("an object key (a string in double quotes) was expected")
			return nil
		}
		keyAt := p.pos
		key, ok := p.string()
		if !ok {
			return nil
		}
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != ':' {
			p.fail("':' was expected after an object key")
			return nil
		}
		p.pos++
		p.skipSpace()
		p.path = append(p.path, pathToken{key: key, index: -1})
		v := p.value()
		if p.err != nil {
			return nil
		}
		if n.get(key) != nil {
			p.dups = append(p.dups, duplicate{ptr: p.pointer(), off: keyAt, key: key})
		}
		p.path = p.path[:len(p.path)-1]
		if n.get(key) == nil {
			n.members = append(n.members, member{key: key, keyAt: keyAt, val: v})
		}
		p.skipSpace()
		if p.pos >= len(p.text) {
			p.fail("unexpected end of the document inside an object")
			return nil
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.end = p.pos
			return n
		default:
			p.fail("',' or '}' was expected in an object")
			return nil
		}
	}
}

func (p *parser) array() *node {
	if !p.enter() {
		return nil
	}
	defer func() { p.depth-- }()
	n := &node{kind: kindArray, start: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		n.end = p.pos
		return n
	}
	for {
		p.skipSpace()
		p.path = append(p.path, pathToken{index: len(n.elems)})
		v := p.value()
		p.path = p.path[:len(p.path)-1]
		if p.err != nil {
			return nil
		}
		n.elems = append(n.elems, v)
		p.skipSpace()
		if p.pos >= len(p.text) {
			p.fail("unexpected end of the document inside an array")
			return nil
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.end = p.pos
			return n
		default:
			p.fail("',' or ']' was expected in an array")
			return nil
		}
	}
}
