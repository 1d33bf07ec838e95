package canonical

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted.
const MaxDepth = 512

// Canonicalize returns the canonical form of the JSON text src.
func Canonicalize(src []byte) ([]byte, error) {
	return Append(make([]byte, 0, len(src)), src)
}

// Append appends the canonical form of the JSON text src to dst. On error dst is returned
// unchanged in length.
func Append(dst, src []byte) ([]byte, error) {
	p := parsers.Get().(*parser)
	p.src, p.pos, p.depth = src, 0, 0
	defer p.release()
	start := len(dst)
	p.skipSpace()
	out, err := p.value(dst)
	if err == nil {
		p.skipSpace()
		if p.pos != len(p.src) {
			err = p.errorf(ErrSyntax, "trailing data")
		}
	}
	if err != nil {
		return dst[:start], err
	}
	return out, nil
}

// AppendString appends s as a canonical JSON string (quoted and escaped). Invalid UTF-8 is written
// as U+FFFD, which is what decoding such a string would give.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		// Bytes that stand for themselves are copied a run at a time: identifiers, event
		// types and keys are nothing else.
		j := i
		for j < len(s) && safeASCII[s[j]] {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendASCII(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// safeASCII marks the bytes a canonical string holds as themselves, without escaping or UTF-8
// validation.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// safeRun returns the end of the run of safeASCII bytes that starts at src[i]. It looks at eight
// bytes at a time while none of them can end the run (a control character, a quote, a backslash
// or a byte of a multi-byte character), then finds the end byte by byte.
func safeRun(src []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		// (v - ones) &^ v & highs is non-zero when a byte of v is zero; (x - ones*0x20) &^ x &
		// highs when a byte of x is below 0x20.
		if ((quote-ones)&^quote|(backslash-ones)&^backslash|(x-ones*0x20)&^x|x)&highs != 0 {
			break
		}
	}
	for i < len(src) && safeASCII[src[i]] {
		i++
	}
	return i
}

func appendASCII(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
	}
	return append(dst, c)
}

type parser struct {
	src     []byte
	pos     int
	depth   int
	members []member // a stack shared by nested objects, to save allocations
	tmp     []byte   // scratch for reordering members
}

// parsers keeps parsers, with their member stacks and scratch, from one call to the next: every
// event of every write is canonicalized, and allocating them each time cost about a tenth of a
// write's allocations.
var parsers = sync.Pool{New: func() any { return &parser{members: make([]member, 0, 16)} }}

// keepScratch and keepMembers bound the scratch (in bytes) and the member stack a parser keeps
// for the next call: one huge document should not pin its memory in the pool.
const (
	keepScratch = 64 << 10
	keepMembers = 1 << 10
)

// release returns p to the pool, holding nothing of the text it parsed.
func (p *parser) release() {
	p.src = nil
	if cap(p.tmp) > keepScratch || cap(p.members) > keepMembers {
		return
	}
	clear(p.members[:cap(p.members)])
	p.members, p.tmp = p.members[:0], p.tmp[:0]
	parsers.Put(p)
}

func (p *parser) errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", kind, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(dst []byte) ([]byte, error) {
	if p.pos >= len(p.src) {
		return dst, p.errorf(ErrSyntax, "unexpected end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(dst)
	case c == '[':
		return p.array(dst)
	case c == '"':
		return p.str(dst)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(dst)
	case c == 't':
		return p.literal(dst, "true")
	case c == 'f':
		return p.literal(dst, "false")
	case c == 'n':
		return p.literal(dst, "null")
	default:
		return dst, p.errorf(ErrSyntax, "unexpected character %q", c)
	}
}

func (p *parser) literal(dst []byte, word string) ([]byte, error) {
	if !bytes.HasPrefix(p.src[p.pos:], []byte(word)) {
		return dst, p.errorf(ErrSyntax, "invalid literal")
	}
	p.pos += len(word)
	return append(dst, word...), nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorf(ErrTooDeep, "more than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) array(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++ // '['
	dst = append(dst, '[')
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.depth--
		return append(dst, ']'), nil
	}
	for {
		var err error
		p.skipSpace()
		if dst, err = p.value(dst); err != nil {
			return dst, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) {
			return dst, p.errorf(ErrSyntax, "unterminated array")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
			dst = append(dst, ',')
		case ']':
			p.pos++
			p.depth--
			return append(dst, ']'), nil
		default:
			return dst, p.errorf(ErrSyntax, "expected , or ] in array")
		}
	}
}

// member locates one object member inside the output buffer while the object is being written.
type member struct {
	key        []byte // unescaped key, for ordering
	start, end int    // the member's `"key":value` bytes in the output
}

func (p *parser) object(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++ // '{'
	base := len(dst)
	mark := len(p.members)
	defer func() { p.members = p.members[:mark] }()
	dst = append(dst, '{')
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.depth--
		return append(dst, '}'), nil
	}
	for {
		if len(p.members) > mark {
			dst = append(dst, ',')
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return dst[:base], p.errorf(ErrSyntax, "expected string key")
		}
		start := len(dst)
		var err error
		if dst, err = p.str(dst); err != nil {
			return dst[:base], err
		}
		key, err := unquote(dst[start:])
		if err != nil {
			return dst[:base], err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return dst[:base], p.errorf(ErrSyntax, "expected : after key")
		}
		p.pos++
		dst = append(dst, ':')
		p.skipSpace()
		if dst, err = p.value(dst); err != nil {
			return dst[:base], err
		}
		p.members = append(p.members, member{key: key, start: start, end: len(dst)})
		p.skipSpace()
		if p.pos >= len(p.src) {
			return dst[:base], p.errorf(ErrSyntax, "unterminated object")
		}
		if p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.src[p.pos] != '}' {
			return dst[:base], p.errorf(ErrSyntax, "expected , or } in object")
		}
		p.pos++
		p.depth--
		break
	}
	return p.sortMembers(append(dst, '}'), base, p.members[mark:])
}

// sortMembers reorders the members of the object written at dst[base:] by key, unless they are
// already in order, which is the common case.
func (p *parser) sortMembers(dst []byte, base int, members []member) ([]byte, error) {
	if slices.IsSortedFunc(members, compareMembers) {
		for i := 1; i < len(members); i++ {
			if bytes.Equal(members[i-1].key, members[i].key) {
				return dst[:base], p.errorf(ErrDuplicateKey, "key %q", members[i].key)
			}
		}
		return dst, nil
	}
	// The keys may point into dst, so the new order is built in p.tmp first.
	slices.SortFunc(members, compareMembers)
	for i := 1; i < len(members); i++ {
		if bytes.Equal(members[i-1].key, members[i].key) {
			return dst[:base], p.errorf(ErrDuplicateKey, "key %q", members[i].key)
		}
	}
	out := append(p.tmp[:0], '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, dst[m.start:m.end]...)
	}
	out = append(out, '}')
	p.tmp = out
	dst = append(dst[:base], out...)
	// The parser goes back to the pool: it must not keep an event's data in memory after the
	// event is erased.
	clear(out)
	return dst, nil
}

func compareMembers(a, b member) int { return bytes.Compare(a.key, b.key) }

// str parses a JSON string at p.pos and appends its canonical form.
func (p *parser) str(dst []byte) ([]byte, error) {
	p.pos++ // opening quote
	dst = append(dst, '"')
	for {
		// Copy the run of bytes that need no escaping in one append.
		run := safeRun(p.src, p.pos)
		dst = append(dst, p.src[p.pos:run]...)
		p.pos = run
		if p.pos >= len(p.src) {
			return dst, p.errorf(ErrSyntax, "unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return append(dst, '"'), nil
		case c == '\\':
			var err error
			if dst, err = p.escape(dst); err != nil {
				return dst, err
			}
		case c < 0x20:
			return dst, p.errorf(ErrSyntax, "control character in string")
		case c < utf8.RuneSelf:
			dst = appendASCII(dst, c)
			p.pos++
		default:
			r, n := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && n == 1 {
				return dst, p.errorf(ErrInvalidString, "invalid UTF-8")
			}
			dst = append(dst, p.src[p.pos:p.pos+n]...)
			p.pos += n
		}
	}
}

func (p *parser) escape(dst []byte) ([]byte, error) {
	if p.pos+1 >= len(p.src) {
		return dst, p.errorf(ErrSyntax, "unterminated escape")
	}
	e := p.src[p.pos+1]
	p.pos += 2
	switch e {
	case '"', '\\', '/':
		return appendASCII(dst, e), nil
	case 'b':
		return appendASCII(dst, '\b'), nil
	case 'f':
		return appendASCII(dst, '\f'), nil
	case 'n':
		return appendASCII(dst, '\n'), nil
	case 'r':
		return appendASCII(dst, '\r'), nil
	case 't':
		return appendASCII(dst, '\t'), nil
	case 'u':
	default:
		return dst, p.errorf(ErrSyntax, "invalid escape \\%c", e)
	}
	r, ok := p.hex4()
	if !ok {
		return dst, p.errorf(ErrSyntax, "invalid \\u escape")
	}
	if utf16.IsSurrogate(r) {
		if r >= 0xDC00 || p.pos+1 >= len(p.src) || p.src[p.pos] != '\\' || p.src[p.pos+1] != 'u' {
			return dst, p.errorf(ErrInvalidString, "lone surrogate")
		}
		p.pos += 2
		lo, ok := p.hex4()
		if !ok {
			return dst, p.errorf(ErrSyntax, "invalid \\u escape")
		}
		r = utf16.DecodeRune(r, lo)
		if r == utf8.RuneError {
			return dst, p.errorf(ErrInvalidString, "lone surrogate")
		}
	}
	if r < utf8.RuneSelf {
		return appendASCII(dst, byte(r)), nil
	}
	return utf8.AppendRune(dst, r), nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range p.src[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// number validates the JSON number grammar and appends the literal with its exponent normalized.
func (p *parser) number(dst []byte) ([]byte, error) {
	s := p.src
	i := p.pos
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
		return dst, p.errorf(ErrSyntax, "invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return dst, p.errorf(ErrSyntax, "invalid number")
		}
	}
	mant := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return dst, p.errorf(ErrSyntax, "invalid number")
		}
		dst = append(dst, s[p.pos:mant]...)
		dst = append(dst, 'e')
		if neg {
			dst = append(dst, '-')
		}
		dst = append(dst, s[d:i]...)
	} else {
		dst = append(dst, s[p.pos:i]...)
	}
	p.pos = i
	return dst, nil
}

// unquote decodes a canonical quoted string (as written by str) to its raw bytes.
func unquote(q []byte) ([]byte, error) {
	q = q[1 : len(q)-1]
	if bytes.IndexByte(q, '\\') < 0 {
		return q, nil
	}
	out := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch q[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			var v byte
			for _, h := range q[i+3 : i+5] {
				v = v<<4 | byte(bytes.IndexByte([]byte(hexDigits), h))
			}
			out = append(out, v)
			i += 4
		default:
			out = append(out, q[i])
		}
	}
	return out, nil
}
