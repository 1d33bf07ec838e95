package tick

import (
	"math"
	"sync/atomic"
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
type node struct {
	gen     uint64
	members []Member
	items   []Value
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
		return len(v.n.items)
	case KindObject:
		return len(v.n.members)
	}
	return 0
}

// Index returns item i of an array; a negative i counts from the end. Out of
// range, or not an array, gives the missing Value.
func (v Value) Index(i int) Value {
	if v.kind != KindArray {
		return Value{}
	}
	if i < 0 {
		i += len(v.n.items)
	}
	if i < 0 || i >= len(v.n.items) {
		return Value{}
	}
	return v.n.items[i]
}

// Get returns the member named key of an object, or the missing Value.
func (v Value) Get(key string) Value {
	if v.kind != KindObject {
		return Value{}
	}
	if i := v.n.find(key); i >= 0 {
		return v.n.members[i].Value
	}
	return Value{}
}

// Items returns the items of an array. The slice is shared: do not modify it.
func (v Value) Items() []Value {
	if v.kind != KindArray {
		return nil
	}
	return v.n.items
}

// Members returns the members of an object in stored order. The slice is
// shared: do not modify it.
func (v Value) Members() []Member {
	if v.kind != KindObject {
		return nil
	}
	return v.n.members
}

func (n *node) find(key string) int {
	for i := range n.members {
		if n.members[i].Key == key {
			return i
		}
	}
	return -1
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
func Equal(a, b Value) bool {
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
		x, y := a.n.items, b.n.items
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
	x, y := a.n.members, b.n.members
	if len(x) != len(y) {
		return false
	}
	if a.n == b.n {
		return true
	}
	for i := range x {
		j := b.n.find(x[i].Key)
		if j < 0 || !Equal(x[i].Value, y[j].Value) {
			return false
		}
	}
	return true
}
