package tick

// Copy-on-write with ownership: a mutation session (one Apply call, or one
// Replayer across many events) has a number g. A node whose gen is g was made
// by this session and nothing else refers to it, so it is changed in place;
// any other node is copied first and the copy gets gen g. Values stored into
// state are frozen (gen 0) so that a value reachable from two places is never
// changed through one of them.

// ownNode makes v's node mutable by session g, copying it if needed.
func ownNode(v *Value, g uint64) *node {
	if v.n.gen == g {
		if v.n.lz != nil {
			// A tail this session appended to a lazy array: the operation
			// needs the items themselves.
			n := v.n
			n.items = append(make([]Value, 0, len(n.m().items)+4), n.m().items...)
			n.lz = nil
		}
		return v.n
	}
	n := &node{gen: g}
	if v.kind == KindArray {
		n.items = append(make([]Value, 0, len(v.n.m().items)+4), v.n.m().items...)
	} else {
		n.members = append(make([]Member, 0, len(v.n.m().members)+4), v.n.m().members...)
	}
	v.n = n
	return n
}

// freeze marks every node of v that session g owns as shared. Nodes of other
// sessions have no descendants owned by g, so the walk stops there.
func freeze(v Value, g uint64) {
	if v.n == nil || v.n.gen != g || g == 0 {
		return
	}
	v.n.gen = 0
	if v.n.lz != nil {
		// A tail node: its text is frozen and so is every item of its tail.
		return
	}
	for _, it := range v.n.m().items {
		freeze(it, g)
	}
	for _, m := range v.n.m().members {
		freeze(m.Value, g)
	}
}

// appendVerbatim appends the frozen v to the lazy verbatim array at, for
// session g, without parsing the text: the first append makes a node with
// the same text and a tail the session owns, later ones extend the tail.
// Appending to a state read from a snapshot so costs the size of the
// tail, not of the array.
func appendVerbatim(at *Value, v Value, g uint64) {
	if at.n.gen == g {
		lz := at.n.lz
		lz.tail = append(lz.tail, v)
		if lz.full.Load() != nil {
			lz.full.Store(nil) // parsed before this append; nothing else holds it
		}
		return
	}
	old := at.n.lz
	tail := append(make([]Value, 0, len(old.tail)+8), old.tail...)
	at.n = &node{gen: g, lz: &lazyText{raw: old.raw, verbatim: true, tail: append(tail, v)}}
}

// newObject returns an empty object owned by session g, with room for at
// least four members since it is to grow.
func newObject(g uint64, capacity int) Value { return allocObject(g, max(capacity, 4)) }

// newArray returns an empty array owned by session g.
func newArray(g uint64, capacity int) Value {
	return Value{kind: KindArray, n: &node{gen: g, items: make([]Value, 0, capacity)}}
}

// Objects of up to 8 members are allocated with their node in one go, in a
// box of 2, 3, 4 or 8 members: objects built by expressions ($merge
// results, object literals) are stored as they are and never grow, so room
// beyond their size is only more memory to clear and collect.
type objBox2 struct {
	n node
	m [2]Member
}

type objBox3 struct {
	n node
	m [3]Member
}

type objBox4 struct {
	n node
	m [4]Member
}

type objBox8 struct {
	n node
	m [8]Member
}

// allocObject returns an empty object with room for size members, owned by g.
func allocObject(g uint64, size int) Value {
	var n *node
	switch {
	case size <= 2:
		b := &objBox2{}
		b.n.members = b.m[:0:2]
		n = &b.n
	case size == 3:
		b := &objBox3{}
		b.n.members = b.m[:0:3]
		n = &b.n
	case size <= 4:
		b := &objBox4{}
		b.n.members = b.m[:0:4]
		n = &b.n
	case size <= 8:
		b := &objBox8{}
		b.n.members = b.m[:0:8]
		n = &b.n
	default:
		n = &node{members: make([]Member, 0, size)}
	}
	n.gen = g
	return Value{kind: KindObject, n: n}
}
