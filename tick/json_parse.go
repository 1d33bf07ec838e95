package tick

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects that ParseJSON accepts.
const MaxDepth = 128

// arenaChunk is the most nodes, members or items allocated in one piece
// before the size of the document has shown they are needed.
const arenaChunk = 256

// grow returns the capacity of the next arena chunk after one of capacity
// old, for a request of need.
func grow(old, need int) int {
	return max(need, min(2*old, 16*arenaChunk), 8)
}

// ParseJSON parses one JSON document (RFC 8259) into a Value. Nesting deeper
// than MaxDepth and trailing data are errors. Invalid UTF-8 inside strings is
// kept as it is, since encoding/json accepts it too and a stored event must
// always replay; AppendJSON writes it as U+FFFD. The input is copied once;
// the result shares nothing with raw.
func ParseJSON(raw []byte) (Value, error) {
	p := scratchParsers.Get().(*parser)
	v, err := p.parse(raw)
	p.reset()
	scratchParsers.Put(p)
	return v, err
}

// scratchParsers keeps parsers for ParseJSON with their scratch stacks, which
// every object and array of a document passes through before its arena copy:
// grown once, instead of once per document.
var scratchParsers = sync.Pool{New: func() any { return new(parser) }}

// reset forgets the document parsed last, keeping only the scratch stacks,
// emptied so that they hold no part of it: its Values own the arenas. Stacks
// that a large document grew past scratchKeep are let go.
func (p *parser) reset() {
	members, items := p.members, p.items
	if cap(members) > scratchKeep {
		members = nil
	}
	if cap(items) > scratchKeep {
		items = nil
	}
	clear(members[:cap(members)])
	clear(items[:cap(items)])
	*p = parser{members: members[:0], items: items[:0]}
}

// scratchKeep is the largest scratch stack, in entries, that reset keeps.
const scratchKeep = 4 * arenaChunk

// ParseState parses JSON that AppendJSON wrote, a stored state: the top
// level like ParseJSON, every array and object inside it as a lazy node over
// its text (validated all the same) that AppendJSON writes back by copying
// the text, and that append extends without parsing it. Reading a long
// state from a snapshot and writing it out again so costs little more than
// copying its text, whatever the size of its arrays, as long as nothing
// walks into them. Text that AppendJSON did not write would be written back
// as it is, not normalized.
func ParseState(raw []byte) (Value, error) {
	p := parser{verbatim: true}
	return p.parse(raw)
}

// parser turns JSON text into Values with few allocations: the input is
// copied into one string that every unescaped string of the result slices;
// nodes, members and items come from chunks allocated per document (or kept
// between documents by a Parser). The
// scratch stacks survive between documents when a parser is reused, and so
// does the chunk of lazy nodes that events take their data and metadata from.
type parser struct {
	src     string
	pos     int
	depth   int
	members []Member
	items   []Value
	nodes   []node
	marena  []Member
	iarena  []Value
	lazy    []lazyNode
	// lazyMark is how many of lazy were taken before the event being
	// decoded, so that a replay can give back what that event did not keep.
	lazyMark int
	keys     []keySpan // keys of the lazy object being validated
	collect  int       // the depth whose keys go to keys; 0 for none
	// tsNum is the event's metadata.timestamp when hasTS: read while the
	// metadata is decoded, since every replayed event is stamped with it.
	tsNum float64
	hasTS bool
	// verbatim is set by ParseState: below the top level, arrays and
	// objects become lazy nodes that AppendJSON writes back as their text.
	verbatim bool
}

func (p *parser) parse(raw []byte) (Value, error) {
	return p.parseText(string(raw))
}

// parseText parses src, which every string of the result may slice.
func (p *parser) parseText(src string) (Value, error) {
	p.src = src
	p.pos, p.depth = 0, 0
	// Upper bounds from byte counts (brackets, colons and commas inside
	// strings only make them larger) size each arena so that a typical event
	// takes one allocation per arena. They are capped so that a document of
	// brackets inside strings cannot make us allocate far more than it holds;
	// larger documents continue in growing chunks.
	containers := strings.Count(src, "{") + strings.Count(src, "[")
	p.nodes = room(p.nodes, min(containers, arenaChunk))
	p.marena = room(p.marena, min(strings.Count(src, ":"), arenaChunk))
	if strings.IndexByte(src, '[') >= 0 {
		p.iarena = room(p.iarena, min(strings.Count(src, ",")+containers, arenaChunk))
	}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.skipWS()
	if p.pos != len(p.src) {
		return Value{}, p.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// room returns arena a if it has room for need more entries after the ones
// that Values already use, else a new chunk for them: of need entries for a
// parser that starts empty, as ParseJSON's do, and of at least twice a's
// capacity for a Parser's, so that its arenas grow to hold every document
// between two Resets.
func room[T any](a []T, need int) []T {
	switch {
	case cap(a)-len(a) >= need:
		return a
	case cap(a) == 0:
		return make([]T, 0, need)
	}
	return make([]T, 0, grow(cap(a), need))
}

// A Parser parses JSON documents as ParseJSON does, into arenas that it
// keeps from one document to the next: a caller that parses a few documents
// for each request and is done with their Values when the request is (an
// implication run) allocates the arenas once instead of for every document.
// Reset hands them back for reuse, so a Value parsed before a Reset must not
// be used after it; the strings of a Value stay valid, as they are not in
// the arenas. The zero Parser is ready to use; it is not safe for
// concurrent use.
type Parser struct {
	p parser
}

// Parse parses raw as ParseJSON does; the Value is valid until the next
// Reset.
func (ps *Parser) Parse(raw []byte) (Value, error) {
	return ps.p.parse(raw)
}

// Reset makes the arenas of every Value parsed since the last Reset free for
// the next documents, cleared so that the Parser keeps none of their strings
// alive. An arena that a large document grew past parserKeep is let go.
func (ps *Parser) Reset() {
	p := &ps.p
	nodes, marena, iarena := keepArena(p.nodes), keepArena(p.marena), keepArena(p.iarena)
	p.reset()
	p.nodes, p.marena, p.iarena = nodes, marena, iarena
}

// parserKeep is the largest arena, in entries, that a Parser keeps.
const parserKeep = 4 * arenaChunk

func keepArena[T any](a []T) []T {
	if cap(a) > parserKeep {
		return nil
	}
	clear(a[:cap(a)])
	return a[:0]
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrJSON, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipWS() {
	src, i := p.src, p.pos
	for i < len(src) {
		if c := src[i]; c > ' ' || (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
			break
		}
		i++
	}
	p.pos = i
}

// SWAR constants: a byte-wise test on eight bytes at once.
const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// load64 reads eight bytes of s from i, little-endian, as one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// specialBytes returns a word whose lowest set bit marks the first byte of x
// that needs a closer look inside a string: a quote, a backslash or a
// control character. Bytes of multi-byte UTF-8 sequences need none (they
// are kept as they are), so they do not stop the scan. Bits above the first
// may be false alarms (borrows), the lowest never is.
func specialBytes(x uint64) uint64 {
	q := x ^ (lsbs * '"')
	b := x ^ (lsbs * '\\')
	return ((q-lsbs)&^q | (b-lsbs)&^b | (x-lsbs*0x20)&^x) & msbs
}

func (p *parser) value() (Value, error) {
	p.pos = skipSpace(p.src, p.pos)
	if p.pos >= len(p.src) {
		return Value{}, p.errorf("unexpected end of input")
	}
	switch c := p.src[p.pos]; c {
	case '{':
		if p.verbatim && p.depth > 0 {
			return p.lazyValue()
		}
		return p.object()
	case '[':
		if p.verbatim && p.depth > 0 {
			return p.lazyValue()
		}
		return p.array()
	case '"':
		s, err := p.str()
		return Value{kind: KindString, str: s}, err
	case 't':
		return p.literal("true", Bool(true))
	case 'f':
		return p.literal("false", Bool(false))
	case 'n':
		return p.literal("null", Null())
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return Value{}, p.errorf("unexpected character %q", c)
	}
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if len(p.src)-p.pos < len(word) || p.src[p.pos:p.pos+len(word)] != word {
		return Value{}, p.errorf("invalid literal")
	}
	p.pos += len(word)
	return v, nil
}

func (p *parser) newNode() *node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]node, 0, grow(cap(p.nodes), 1))
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	return &p.nodes[len(p.nodes)-1]
}

// skipSpace returns the position of the first non-whitespace byte at or
// after i.
func skipSpace(src string, i int) int {
	for i < len(src) && src[i] <= ' ' && (src[i] == ' ' || src[i] == '\n' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	return i
}

func (p *parser) object() (Value, error) {
	if p.depth++; p.depth > MaxDepth {
		return Value{}, p.errorf("nesting deeper than %d", MaxDepth)
	}
	src := p.src
	base := len(p.members)
	var index map[string]int
	i := skipSpace(src, p.pos+1)
	if i < len(src) && src[i] == '}' {
		i++
	} else {
		for {
			i = skipSpace(src, i)
			p.pos = i
			if i >= len(src) || src[i] != '"' {
				return Value{}, p.errorf("expected a string key")
			}
			key, err := p.str()
			if err != nil {
				return Value{}, err
			}
			i = skipSpace(src, p.pos)
			p.pos = i
			if i >= len(src) || src[i] != ':' {
				return Value{}, p.errorf("expected ':'")
			}
			p.pos = i + 1
			val, err := p.value()
			if err != nil {
				return Value{}, err
			}
			dup := -1
			if count := len(p.members) - base; count < 16 && index == nil {
				for j := base; j < len(p.members); j++ {
					if p.members[j].Key == key {
						dup = j
						break
					}
				}
			} else {
				dup = p.duplicate(base, key, &index)
			}
			if dup >= 0 {
				p.members[dup].Value = val
			} else {
				p.members = append(p.members, Member{Key: key, Value: val})
			}
			i = skipSpace(src, p.pos)
			p.pos = i
			if i >= len(src) {
				return Value{}, p.errorf("unexpected end of input in object")
			}
			c := src[i]
			i++
			if c == '}' {
				break
			}
			if c != ',' {
				return Value{}, p.errorf("expected ',' or '}'")
			}
		}
	}
	p.pos = i
	p.depth--
	n := p.newNode()
	count := len(p.members) - base
	if count > 0 {
		if len(p.marena)+count > cap(p.marena) {
			p.marena = make([]Member, 0, grow(cap(p.marena), count))
		}
		at := len(p.marena)
		p.marena = append(p.marena, p.members[base:]...)
		n.members = p.marena[at : at+count : at+count]
	}
	p.members = p.members[:base]
	return Value{kind: KindObject, n: n}, nil
}

// duplicate finds key among the members parsed so far for this object. Large
// objects switch to a map so that many keys cannot make parsing quadratic.
func (p *parser) duplicate(base int, key string, index *map[string]int) int {
	count := len(p.members) - base
	if *index == nil && count < 32 {
		for i := base; i < len(p.members); i++ {
			if p.members[i].Key == key {
				return i
			}
		}
		return -1
	}
	if *index == nil {
		*index = make(map[string]int, count*2)
		for i := base; i < len(p.members); i++ {
			(*index)[p.members[i].Key] = i
		}
	}
	if i, ok := (*index)[key]; ok {
		return i
	}
	(*index)[key] = len(p.members)
	return -1
}

func (p *parser) array() (Value, error) {
	if p.depth++; p.depth > MaxDepth {
		return Value{}, p.errorf("nesting deeper than %d", MaxDepth)
	}
	p.pos++
	base := len(p.items)
	p.skipWS()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
	} else {
		for {
			val, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.items = append(p.items, val)
			p.skipWS()
			if p.pos >= len(p.src) {
				return Value{}, p.errorf("unexpected end of input in array")
			}
			if c := p.src[p.pos]; c == ',' {
				p.pos++
			} else if c == ']' {
				p.pos++
				break
			} else {
				return Value{}, p.errorf("expected ',' or ']'")
			}
		}
	}
	p.depth--
	n := p.newNode()
	count := len(p.items) - base
	if count > 0 {
		if len(p.iarena)+count > cap(p.iarena) {
			p.iarena = make([]Value, 0, grow(cap(p.iarena), count))
		}
		at := len(p.iarena)
		p.iarena = append(p.iarena, p.items[base:]...)
		n.items = p.iarena[at : at+count : at+count]
	}
	p.items = p.items[:base]
	return Value{kind: KindArray, n: n}, nil
}

// str reads a string starting at the opening quote. Strings without escapes
// are slices of p.src and cost no allocation.
func (p *parser) str() (string, error) {
	src := p.src
	start := p.pos + 1
	i := start
	for {
		var c byte
		if i+8 <= len(src) {
			m := specialBytes(load64(src, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			c = src[i]
		} else if i < len(src) {
			c = src[i]
		} else {
			p.pos = i
			return "", p.errorf("unterminated string")
		}
		switch {
		case c == '"':
			p.pos = i + 1
			return src[start:i], nil
		case c == '\\':
			p.pos = i
			return p.escapedStr(start)
		case c < 0x20:
			p.pos = i
			return "", p.errorf("control character in string")
		}
		i++
	}
}

func (p *parser) escapedStr(start int) (string, error) {
	buf := make([]byte, 0, p.pos-start+16)
	buf = append(buf, p.src[start:p.pos]...)
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.src) {
			break
		}
		e := p.src[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.pos+1 < len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					if x, ok := p.hex4(); ok {
						r2 = x
					} else {
						p.pos = save
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
				} else {
					r = utf8.RuneError
					if r2 >= 0 {
						buf = utf8.AppendRune(buf, r)
						r = r2
						if utf16.IsSurrogate(r) {
							r = utf8.RuneError
						}
					}
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errorf("invalid escape \\%c", e)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.src[p.pos : p.pos+4]) {
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

func (p *parser) number() (Value, error) {
	src := p.src
	start := p.pos
	i := start
	if src[i] == '-' {
		i++
	}
	intStart := i
	if i < len(src) && src[i] == '0' {
		i++
	} else {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i == intStart {
		p.pos = i
		return Value{}, p.errorf("invalid number")
	}
	intEnd := i
	if i < len(src) && src[i] == '.' {
		p.pos = i + 1
		if !p.digits() {
			return Value{}, p.errorf("invalid number")
		}
		i = p.pos
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		p.pos = i
		if !p.digits() {
			return Value{}, p.errorf("invalid number")
		}
		i = p.pos
	}
	p.pos = i
	if i == intEnd && i-intStart <= 15 {
		// An integer of up to 15 digits is exact in a float64.
		var n int64
		for _, c := range []byte(src[intStart:i]) {
			n = n*10 + int64(c-'0')
		}
		if start != intStart {
			n = -n
		}
		return Value{kind: KindNumber, num: float64(n)}, nil
	}
	f, err := strconv.ParseFloat(src[start:i], 64)
	if err != nil {
		return Value{}, p.errorf("number out of range")
	}
	return Value{kind: KindNumber, num: f}, nil
}

func (p *parser) digits() bool {
	s := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > s
}
