package tick

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds. KindMissing is the zero Value: a path that resolved to nothing.
// It never appears inside an array or object.
const (
	KindMissing Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"missing", "null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Member is one key and value of an object.
type Member struct {
	Key   string
	Value Value
}

// node holds the children of an array or object. gen says who may mutate it
// in place: 0 means frozen (shared, never mutated); any other number is the
// mutation session that created it and alone may change it.
//
// A lazy node has lz, the validated JSON text of the array or object, and
// no children until something needs them. Lazy nodes are frozen, but for an
// array with a tail that a session is still appending to; Get reads a
// member straight from the text without parsing the rest.
type node struct {
	gen     uint64
	members []Member
	items   []Value
	lz      *lazyText
}

// lazyText is the text of a lazy node and, once something needed the
// children, the parsed node, published atomically because frozen values
// are shared between goroutines. It is kept apart so that every other node
// stays in the 64-byte size class.
//
// verbatim says raw is exactly what AppendJSON writes for it (text that
// AppendJSON wrote, such as a stored state), so that writing the node copies
// the text. tail, only on arrays and only with verbatim, holds items
// appended after those of raw: appending to a long stored array neither
// parses nor copies it (see appendVerbatim). Every item of tail is frozen.
type lazyText struct {
	raw      string
	full     atomic.Pointer[node]
	verbatim bool
	tail     []Value
}

// uniqueKeys is the gen of a lazy object whose keys are known not to
// repeat, so that a lookup may stop at the first match. It is no session's
// number, so such a node is frozen like every lazy node, and the flag costs
// no room.
const uniqueKeys = 1 << 63

// m returns the node that holds the children: n itself, or the parsed form
// of a lazy node.
func (n *node) m() *node {
	if n.lz == nil {
		return n
	}
	if f := n.lz.full.Load(); f != nil {
		return f
	}
	return n.load()
}

// load parses a lazy node's text, followed by its tail. Two goroutines may
// both parse; the first to publish wins and both use its result.
func (n *node) load() *node {
	var p parser
	v, err := p.parseText(n.lz.raw)
	if err != nil {
		// The text was validated when the node was made.
		panic("tick: lazy JSON text no longer parses: " + err.Error())
	}
	full := v.n
	if tail := n.lz.tail; len(tail) > 0 {
		full = &node{items: append(append(make([]Value, 0, len(full.items)+len(tail)), full.items...), tail...)}
	}
	if !n.lz.full.CompareAndSwap(nil, full) {
		return n.lz.full.Load()
	}
	return full
}

// Value is an immutable-by-contract JSON value: 40 bytes, passed by value.
// Scalars live inline; arrays and objects point to a node. Object members
// keep the order in which they were stored, and keys are unique.
type Value struct {
	kind Kind
	num  float64 // the number; 1 or 0 for a boolean
	str  string
	n    *node
}

// sessions hands out mutation session numbers; 0 is reserved for frozen.
var sessions atomic.Uint64

func newSession() uint64 { return sessions.Add(1) }

// Null returns the JSON null.
func Null() Value { return Value{kind: KindNull} }

// Bool returns true or false.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBool, num: 1}
	}
	return Value{kind: KindBool}
}

// Number returns a number. NaN and infinities are not JSON; they become null.
func Number(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Null()
	}
	return Value{kind: KindNumber, num: f}
}

// String returns a string.
func String(s string) Value { return Value{kind: KindString, str: s} }

// Array returns an array holding a copy of items. Missing items are dropped.
func Array(items ...Value) Value {
	cp := make([]Value, 0, len(items))
	for _, it := range items {
		if it.kind != KindMissing {
			cp = append(cp, it)
		}
	}
	return Value{kind: KindArray, n: &node{items: cp}}
}

// Object returns an object of the members in order; a repeated key keeps the
// first position and the last value. Missing values are dropped.
func Object(members ...Member) Value {
	v := Value{kind: KindObject, n: &node{members: make([]Member, 0, len(members))}}
	for _, m := range members {
		if m.Value.kind != KindMissing {
			v.n.put(m.Key, m.Value)
		}
	}
	return v
}

// Kind reports the JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsMissing reports whether v is the zero Value (nothing resolved).
func (v Value) IsMissing() bool { return v.kind == KindMissing }

// Bool returns the boolean; false for any other kind.
func (v Value) Bool() bool { return v.kind == KindBool && v.num != 0 }

// Num returns the number; 0 for any other kind.
func (v Value) Num() float64 {
	if v.kind != KindNumber {
		return 0
	}
	return v.num
}

// Str returns the string; "" for any other kind.
func (v Value) Str() string {
	if v.kind != KindString {
		return ""
	}
	return v.str
}

// Len is the number of items of an array or members of an object; 0 otherwise.
func (v Value) Len() int {
	switch v.kind {
	case KindArray:
		return len(v.n.m().items)
	case KindObject:
		return len(v.n.m().members)
	}
	return 0
}

// Index returns item i of an array; a negative i counts from the end. Out of
// range, or not an array, gives the missing Value.
func (v Value) Index(i int) Value {
	if v.kind != KindArray {
		return Value{}
	}
	items := v.n.m().items
	if i < 0 {
		i += len(items)
	}
	if i < 0 || i >= len(items) {
		return Value{}
	}
	return items[i]
}

// Get returns the member named key of an object, or the missing Value.
func (v Value) Get(key string) Value {
	if v.kind == KindObject {
		// A lazy node has no members of its own: the loop finds nothing.
		n := v.n
		for i := range n.members {
			if sameString(n.members[i].Key, key) {
				return n.members[i].Value
			}
		}
		if n.lz != nil {
			return n.lazyGet(key)
		}
	}
	return Value{}
}

// lazyGet is Get on a lazy node: from the text until it is parsed.
func (n *node) lazyGet(key string) Value {
	if f := n.lz.full.Load(); f != nil {
		if i := f.find(key); i >= 0 {
			return f.members[i].Value
		}
		return Value{}
	}
	return rawValue(rawMember(n.lz.raw, key, n.gen == uniqueKeys))
}

// Items returns the items of an array. The slice is shared: do not modify it.
func (v Value) Items() []Value {
	if v.kind != KindArray {
		return nil
	}
	return v.n.m().items
}

// Members returns the members of an object in stored order. The slice is
// shared: do not modify it.
func (v Value) Members() []Member {
	if v.kind != KindObject {
		return nil
	}
	return v.n.m().members
}

// find is the position of key among the members of n, or -1. n must not be
// lazy: call n.m().find on a node that may be.
func (n *node) find(key string) int {
	ms := n.members
	for i := range ms {
		if ms[i].Key == key {
			return i
		}
	}
	return -1
}

// sameString is a == b for object keys and the strings matched against
// them, compared inline: they are short, most comparisons fail on the
// length, and calling the runtime's memequal for the rest cost more than
// the comparison itself. Keys written from the same compiled name share
// their bytes and need no comparison at all.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || sameBytes(a, b))
}

// sameBytes compares two strings of the same length. Loads of fixed size
// compile to single (unaligned) loads where the machine has them, and to
// byte loads where it does not; nothing here calls anything, so the
// function needs no frame.
func sameBytes(a, b string) bool {
	pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
	le := binary.LittleEndian
	n := uintptr(len(a))
	switch {
	case n == 0:
		return true
	case n < 4:
		// Bytes 0, n/2 and n-1 are all of them.
		h, l := n/2, n-1
		return *(*byte)(pa) == *(*byte)(pb) && *(*byte)(unsafe.Add(pa, h)) == *(*byte)(unsafe.Add(pb, h)) &&
			*(*byte)(unsafe.Add(pa, l)) == *(*byte)(unsafe.Add(pb, l))
	case n < 8:
		// The first and the last four bytes cover the whole key.
		return le.Uint32((*[4]byte)(pa)[:]) == le.Uint32((*[4]byte)(pb)[:]) &&
			le.Uint32((*[4]byte)(unsafe.Add(pa, n-4))[:]) == le.Uint32((*[4]byte)(unsafe.Add(pb, n-4))[:])
	}
	// Eight bytes at a time; the last eight, which may overlap those
	// compared already, end it.
	for i := uintptr(0); i < n-8; i += 8 {
		if le.Uint64((*[8]byte)(unsafe.Add(pa, i))[:]) != le.Uint64((*[8]byte)(unsafe.Add(pb, i))[:]) {
			return false
		}
	}
	return le.Uint64((*[8]byte)(unsafe.Add(pa, n-8))[:]) == le.Uint64((*[8]byte)(unsafe.Add(pb, n-8))[:])
}

// put sets key on a node the caller owns.
func (n *node) put(key string, val Value) {
	if i := n.find(key); i >= 0 {
		n.members[i].Value = val
		return
	}
	n.members = append(n.members, Member{Key: key, Value: val})
}

// Equal reports deep equality without type coercion: 1 and "1" differ, 1 and
// 1.0 are the same number, and object member order does not matter.
// Strings, the common case of matching, are compared inline.
func Equal(a, b Value) bool {
	if a.kind == KindString && b.kind == KindString {
		return a.str == b.str
	}
	return equal(a, b)
}

// sameText tells whether two lazy nodes hold the same text and no tail, and
// so the same value.
func sameText(a, b *node) bool {
	return a.lz != nil && b.lz != nil && a.lz.raw == b.lz.raw && len(a.lz.tail) == 0 && len(b.lz.tail) == 0
}

func equal(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindMissing, KindNull:
		return true
	case KindBool, KindNumber:
		return a.num == b.num
	case KindString:
		return a.str == b.str
	case KindArray:
		if a.n == b.n || sameText(a.n, b.n) {
			return true
		}
		x, y := a.n.m().items, b.n.m().items
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if a.n == b.n || sameText(a.n, b.n) {
		return true
	}
	x, y := a.n.m().members, b.n.m().members
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		j := b.n.m().find(x[i].Key)
		if j < 0 || !Equal(x[i].Value, y[j].Value) {
			return false
		}
	}
	return true
}
