package tick

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Lazy values: an event's data and metadata are validated when the event is
// decoded but kept as text, and parsed only when something needs their
// members. Reading one member (the usual "$.data.id") scans the text; a
// whole object stored into state ("set ... $.data", "append ... $.data")
// stays text for as long as nothing walks into it.

// lazyValue reads the value at p.pos: an array or object is validated and
// becomes a lazy node over its text, a scalar is parsed.
func (p *parser) lazyValue() (Value, error) {
	p.pos = skipSpace(p.src, p.pos)
	if p.pos >= len(p.src) {
		return Value{}, p.errorf("unexpected end of input")
	}
	kind := KindObject
	switch p.src[p.pos] {
	case '{':
	case '[':
		kind = KindArray
	default:
		return p.value()
	}
	start := p.pos
	// The keys of the top level are collected to learn whether they are
	// unique, which lets a lookup stop at the first match.
	p.keys, p.collect = p.keys[:0], p.depth+1
	if len(p.src) > math.MaxInt32 {
		p.collect = -1 // positions would not fit a keySpan
	}
	if err := p.skipValue(); err != nil {
		p.collect = 0
		return Value{}, err
	}
	if len(p.lazy) == cap(p.lazy) {
		p.lazy = make([]lazyNode, 0, min(2*cap(p.lazy)+2, 64))
		p.lazyMark = 0
	}
	p.lazy = p.lazy[:len(p.lazy)+1]
	ln := &p.lazy[len(p.lazy)-1]
	// The slot may be one an event gave back (see lentText.end).
	if ln.t.full.Load() != nil {
		ln.t.full.Store(nil)
	}
	ln.t.raw = p.src[start:p.pos]
	ln.t.verbatim = p.verbatim
	n := &ln.n
	n.gen, n.lz = 0, &ln.t
	if kind == KindObject && p.collect != -1 && p.distinctKeys() {
		n.gen = uniqueKeys
	}
	p.collect = 0
	return Value{kind: kind, n: n}, nil
}

// quoteOrBackslash is specialBytes for text already validated: only the
// end of the string and escapes matter.
func quoteOrBackslash(x uint64) uint64 {
	q := x ^ (lsbs * '"')
	b := x ^ (lsbs * '\\')
	return ((q-lsbs)&^q | (b-lsbs)&^b) & msbs
}

// strEnd returns the position after the closing quote of the validated
// string that starts at i, and whether it holds escapes.
func strEnd(s string, i int) (int, bool) {
	esc := false
	i++
	for {
		if i+8 <= len(s) {
			m := quoteOrBackslash(load64(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch s[i] {
		case '"':
			return i + 1, esc
		case '\\':
			esc = true
			i += 2
			continue
		}
		i++
	}
}

// skipRaw returns the end of the validated value that starts at i, and for
// a string whether it holds escapes.
func skipRaw(s string, i int) (int, bool) {
	switch s[i] {
	case '"':
		return strEnd(s, i)
	case '{', '[':
		depth := 0
		for {
			switch s[i] {
			case '"':
				i, _ = strEnd(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, false
				}
			}
			i++
		}
	}
	// A number or literal: it ends where its characters do.
	for i < len(s) && scalarByte[s[i]] {
		i++
	}
	return i, false
}

// scalarByte tells the bytes that may appear in a number or a literal.
var scalarByte = func() (t [256]bool) {
	for _, c := range "0123456789+-.eEtruefalsn" {
		t[c] = true
	}
	return t
}()

// rawIter walks the members of a validated object text.
type rawIter struct {
	s        string
	i        int
	key, val string // the member's key and the text of its value
	esc      bool   // val is a string with escapes
}

func newRawIter(obj string) rawIter { return rawIter{s: obj, i: skipSpace(obj, 1)} }

func (it *rawIter) next() bool {
	s, i := it.s, it.i
	if s[i] == '}' {
		return false
	}
	end, esc := strEnd(s, i)
	if esc {
		p := parser{src: s, pos: i}
		it.key, _ = p.str() // validated text: no error
	} else {
		it.key = s[i+1 : end-1]
	}
	i = skipSpace(s, skipSpace(s, end)+1)
	end, it.esc = skipRaw(s, i)
	it.val = s[i:end]
	if i = skipSpace(s, end); s[i] == ',' {
		i = skipSpace(s, i+1)
	}
	it.i = i
	return true
}

// rawMember returns the text of the value of key in the validated object
// text obj, or "" when there is none. A repeated key gives its last value,
// as parsing does; unique says no key repeats, so the first match is it.
func rawMember(obj, key string, unique bool) (string, bool) {
	// Compact text looked up by its first key, the common case, needs no
	// walk. Keys of a unique object have no escapes, so a key without
	// quotes matching the text is the key.
	if k := len(key); unique && len(obj) > k+3 && obj[1] == '"' && obj[k+2] == '"' && obj[k+3] == ':' &&
		obj[2:k+2] == key && strings.IndexByte(key, '"') < 0 {
		i := skipSpace(obj, k+4)
		end, esc := skipRaw(obj, i)
		return obj[i:end], esc
	}
	found, esc := "", false
	it := newRawIter(obj)
	for it.next() {
		if it.key == key {
			if found, esc = it.val, it.esc; unique {
				break
			}
		}
	}
	return found, esc
}

// keySpan is where a key, quotes included, sits in the parser's text.
type keySpan struct{ start, end int32 }

// distinctKeys reports whether the collected keys, written without escapes,
// are known to be distinct: few, and all different.
func (p *parser) distinctKeys() bool {
	keys, src := p.keys, p.src
	if len(keys) > 16 {
		return false
	}
	// Keys differ mostly in length or first letter: when no two share both,
	// which a word of bits tells in one pass, they are distinct.
	var seen uint64
	for _, k := range keys {
		bit := uint64(1) << ((uint32(k.end-k.start)*7 + uint32(src[k.start+1])) & 63)
		if seen&bit != 0 {
			goto compare
		}
		seen |= bit
	}
	return true
compare:
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		// Keys differ mostly in length or first letter: compare those first.
		n, c := k.end-k.start, src[k.start+1]
		for _, k2 := range keys[:i] {
			if k2.end-k2.start == n && src[k2.start+1] == c && src[k2.start:k2.end] == src[k.start:k.end] {
				return false
			}
		}
	}
	return true
}

// rawValue turns the validated text of one value into a Value; arrays and
// objects stay lazy. "" is the missing Value; esc says a string has escapes.
func rawValue(t string, esc bool) Value {
	if t == "" {
		return Value{}
	}
	switch t[0] {
	case '{':
		return Value{kind: KindObject, n: newLazy(t)}
	case '[':
		return Value{kind: KindArray, n: newLazy(t)}
	case 't':
		return Bool(true)
	case 'f':
		return Bool(false)
	case 'n':
		return Null()
	case '"':
		if !esc {
			return String(t[1 : len(t)-1])
		}
		p := parser{src: t}
		s, _ := p.str() // validated text: no error
		return String(s)
	}
	return rawNumber(t)
}

// rawNumber converts the validated text of a number.
func rawNumber(t string) Value {
	digits := t
	if t[0] == '-' {
		digits = t[1:]
	}
	if len(digits) <= 15 {
		// An integer of up to 15 digits is exact in a float64.
		var n int64
		i := 0
		if len(digits) >= 8 {
			// Timestamps: eight digits at once.
			if v, ok := eightDigits(load64(digits, 0)); ok {
				n, i = int64(v), 8
			}
		}
		for ; i < len(digits); i++ {
			c := digits[i]
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int64(c-'0')
		}
		if n >= 0 {
			if len(digits) != len(t) {
				n = -n
			}
			return Value{kind: KindNumber, num: float64(n)}
		}
	}
	f, _ := strconv.ParseFloat(t, 64) // validated text, in range
	return Value{kind: KindNumber, num: f}
}

// eightDigits converts eight ASCII digits, loaded little-endian (the first
// digit in the low byte), with a few multiplications instead of a loop; ok
// is false if one of the bytes is not a digit.
func eightDigits(x uint64) (uint64, bool) {
	// A digit is 0x30 to 0x39: high nibble 3, and adding 6 does not carry
	// out of the low nibble.
	if x&(lsbs*0xF0) != lsbs*0x30 || (x+lsbs*0x06)&(lsbs*0xF0) != lsbs*0x30 {
		return 0, false
	}
	x -= lsbs * '0'
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	x = (x*10000 + x>>32) & 0xFFFFFFFF
	return x, true
}

// lazyNode is a lazy node with its text, allocated together.
type lazyNode struct {
	n node
	t lazyText
}

func newLazy(raw string) *node {
	ln := &lazyNode{t: lazyText{raw: raw}}
	ln.n.lz = &ln.t
	return &ln.n
}

// walkRaw follows the leading field segments of segs through the text of a
// lazy object that has not been parsed, so that "$.metadata.actor.id" builds
// only its result. It returns the value reached and the segments left.
func walkRaw(v Value, segs []segment) (Value, []segment) {
	t, unique, esc := v.n.lz.raw, v.n.gen == uniqueKeys, false
	for len(segs) > 0 && segs[0].kind == segField && t != "" && t[0] == '{' {
		t, esc = rawMember(t, segs[0].name, unique)
		segs, unique = segs[1:], false
	}
	return rawValue(t, esc), segs
}
