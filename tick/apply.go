package tick

import (
	"fmt"
	"math"
	"strings"
)

// run is one application of operations to a state in mutation session g.
type run struct {
	s Scope
	g uint64
	// lent, in a replay, is the event text while it is still the caller's
	// buffer; values made from it must be copied out before state keeps
	// them (see own).
	lent *lentText
}

// Run applies the operations alone to state and returns the new state; state
// itself is never modified. Most callers want Apply.
func (h *Handler) Run(state Value, ev *Event) (Value, error) {
	r := run{g: newSession()}
	r.start(h, state, ev)
	if err := r.ops(h.ops); err != nil {
		return state, err
	}
	freeze(r.s.State, r.g)
	return r.s.State, nil
}

// Apply is what the engine does for one event: the operations, then the
// automatic created_at and updated_at (see Stamp). state is not modified.
func (h *Handler) Apply(state Value, ev *Event) (Value, error) {
	r := run{g: newSession()}
	r.start(h, state, ev)
	created := state.Get("created_at")
	if err := r.ops(h.ops); err != nil {
		return state, err
	}
	stamp(&r.s.State, created, r.s.timestamp(), r.g, &stampHint{})
	freeze(r.s.State, r.g)
	return r.s.State, nil
}

// Stamp returns after with created_at and updated_at injected, as the engine
// does after all handlers of an event ran: created_at keeps before's value
// (the first event's timestamp) or, on the first event, takes this event's
// metadata.timestamp; updated_at always takes this event's. Values set by
// handlers are overwritten. A missing state becomes an object; nothing
// changes when after is another non-object or the event has no numeric
// timestamp.
func Stamp(before, after Value, ev *Event) Value {
	if ev == nil {
		return after
	}
	g := newSession()
	stamp(&after, before.Get("created_at"), ev.Metadata.Get("timestamp"), g, &stampHint{})
	freeze(after, g)
	return after
}

// stampHint remembers where created_at and updated_at sit in the root object,
// so that a replay does not search for them on every event, and, while
// stamped, the created_at that the last stamp wrote, which is therefore the
// state's before the next event.
type stampHint struct {
	created, updated int
	stamped          bool
	createdAt        Value
}

// stamp is Stamp on a state owned by session g, with the event's
// metadata.timestamp already read.
func stamp(state *Value, created, ts Value, g uint64, hint *stampHint) {
	hint.stamped = false
	if ts.kind != KindNumber {
		return
	}
	if state.kind == KindMissing {
		// Every aggregate gets the two fields, even one whose handlers
		// have not written anything yet.
		*state = newObject(g, 2)
	}
	if state.kind != KindObject {
		return
	}
	if created.kind == KindMissing {
		created = ts
	}
	n := ownNode(state, g)
	if ms, c, u := n.members, hint.created, hint.updated; c < len(ms) && u < len(ms) &&
		sameString(ms[c].Key, "created_at") && sameString(ms[u].Key, "updated_at") {
		// Where the last event left them: two stores, of the number alone
		// when a number is there (a Value holding no pointer), which
		// spares the write barrier of storing a whole Value.
		setNumber(&ms[c].Value, created)
		setNumber(&ms[u].Value, ts)
	} else {
		hint.created = putAt(n, "created_at", created, c)
		hint.updated = putAt(n, "updated_at", ts, u)
	}
	hint.stamped = true
	setNumber(&hint.createdAt, created)
}

// setNumber stores v at *at, as only a number when both are numbers.
func setNumber(at *Value, v Value) {
	if at.kind == KindNumber && v.kind == KindNumber {
		at.num = v.num
		return
	}
	*at = v
}

// putAt is put with a guess of the member's position; it returns the position.
func putAt(n *node, key string, v Value, at int) int {
	if at >= len(n.members) || !sameString(n.members[at].Key, key) {
		if at = n.find(key); at < 0 {
			n.members = append(n.members, Member{Key: key})
			at = len(n.members) - 1
		}
	}
	n.members[at].Value = v
	return at
}

// getAt is Get with a guess of the member's position.
func getAt(v Value, key string, at int) Value {
	if v.kind == KindObject && at < len(v.n.members) && v.n.members[at].Key == key {
		return v.n.members[at].Value
	}
	return v.Get(key)
}

// start prepares a run of h on state for ev.
func (r *run) start(h *Handler, state Value, ev *Event) {
	if ev == nil {
		ev = &Event{}
	}
	r.s.Event = ev
	if state != r.s.State {
		// A Replayer runs on its own state: storing it again would only
		// cost a write barrier while the collector marks.
		r.s.State = state
	}
	r.s.Bindings = r.s.Bindings[:0]
	r.s.hasBefore = h.before
	r.s.tsState = tsCacheable
	if h.before {
		// "$.state" must keep showing this state while the operations run.
		freeze(state, r.g)
		r.s.before = state
	}
}

func (r *run) ops(ops []op) error {
	for i := range ops {
		if err := r.op(&ops[i]); err != nil {
			return err
		}
	}
	return nil
}

func typeError(ptr, format string, args ...any) error {
	return &Error{Pointer: ptr, Message: fmt.Sprintf(format, args...), Err: ErrType}
}

func targetName(t []string) string {
	if len(t) == 0 {
		return "the root"
	}
	return fmt.Sprintf("%q", strings.Join(t, "."))
}

// slot returns the value at target, made mutable along the way. With create,
// missing or null intermediate objects are made and a missing final member
// is added as a placeholder that the caller must fill; without, nil means
// the target does not exist.
func (r *run) slot(o *op, create bool) (*Value, error) {
	cur := &r.s.State
	for i, name := range o.target {
		switch cur.kind {
		case KindObject:
		case KindMissing, KindNull:
			if !create {
				return nil, nil
			}
			*cur = newObject(r.g, 4)
		default:
			return nil, typeError(o.ptr, "cannot reach target %s: %q is %s, not an object", targetName(o.target), strings.Join(o.target[:i], "."), cur.kind)
		}
		n := ownNode(cur, r.g)
		j := n.find(name)
		if j < 0 {
			if !create {
				return nil, nil
			}
			n.members = append(n.members, Member{Key: name})
			j = len(n.members) - 1
		}
		cur = &n.members[j].Value
	}
	return cur, nil
}

// value evaluates the op's value and freezes it for storing. ok is false when
// an optional path found nothing and the operation is a no-op.
func (r *run) value(o *op) (Value, bool, error) {
	v, err := o.value.eval(&r.s)
	if err != nil || v.kind == KindMissing {
		return v, false, err
	}
	freeze(v, r.g)
	return v, true, nil
}

func (r *run) op(o *op) error {
	if o.keeps != keepsNothing && r.lent != nil && r.lent.text != "" {
		r.lent.own(r.s.Event, o.keeps, r.s.tsState == tsCached)
	}
	// The operations handlers use most are kept apart from the rest, whose
	// locals would give every operation a large frame to set up.
	switch o.code {
	case opSet:
		v, ok, err := r.value(o)
		if !ok {
			return err
		}
		if len(o.target) == 0 {
			r.s.State = v
			return nil
		}
		at, err := r.slot(o, true)
		if err != nil {
			return err
		}
		*at = v
		return nil
	case opAppend:
		v, ok, err := r.value(o)
		if !ok {
			return err
		}
		at, err := r.array(o, true)
		if err != nil {
			return err
		}
		if at.n.lz != nil && at.n.lz.verbatim {
			appendVerbatim(at, v, r.g)
			return nil
		}
		n := ownNode(at, r.g)
		n.items = append(n.items, v)
		return nil
	case opMerge:
		v, ok, err := r.value(o)
		if !ok {
			return err
		}
		if v.kind != KindObject {
			return typeError(o.ptr, "merge value must be an object, not %s", v.kind)
		}
		at, err := r.slot(o, true)
		if err != nil {
			return err
		}
		return r.mergeInto(o, at, v)
	case opIncrement:
		by, ok, err := r.number(o)
		if !ok {
			return err
		}
		at, err := r.slot(o, true)
		if err != nil {
			return err
		}
		return add(o, at, by)
	case opRemove:
		return r.remove(o)
	case opUpsert:
		return r.upsert(o)
	case opIf:
		ok, err := o.pred.eval(&r.s)
		if err != nil {
			return err
		}
		if ok {
			return r.ops(o.then)
		}
		return r.ops(o.els)
	}
	return r.opOther(o)
}

// opOther is op for the operations not handled there.
func (r *run) opOther(o *op) error {
	switch o.code {
	case opFilter:
		at, err := r.array(o, false)
		if at == nil || err != nil {
			return err
		}
		return r.keep(o, at, true)
	case opMap:
		return r.mapItems(o)
	case opUpdateWhere:
		return r.updateWhere(o)
	case opAppendUnique:
		v, ok, err := r.value(o)
		if !ok {
			return err
		}
		at, err := r.array(o, true)
		if err != nil {
			return err
		}
		var want Value
		if o.field != "" {
			want = v.Get(o.field)
		}
		for _, it := range at.n.m().items {
			if (o.field == "" && Equal(it, v)) || (o.field != "" && Equal(it.Get(o.field), want)) {
				return nil
			}
		}
		n := ownNode(at, r.g)
		n.items = append(n.items, v)
	case opSetAt, opMergeAt, opIncrementAt, opRemoveAt:
		return r.dynamicKey(o)
	case opLet:
		return r.let(o)
	}
	return nil
}

// array returns the array at target; with create a missing or null target
// becomes an empty array, without it a missing target gives nil.
func (r *run) array(o *op, create bool) (*Value, error) {
	at, err := r.slot(o, create)
	if at == nil || err != nil {
		return nil, err
	}
	switch at.kind {
	case KindArray:
		return at, nil
	case KindMissing, KindNull:
		if !create {
			return nil, nil
		}
		*at = newArray(r.g, 4)
		return at, nil
	}
	return nil, typeError(o.ptr, "target %s is %s, not an array", targetName(o.target), at.kind)
}

func (r *run) mergeInto(o *op, at *Value, v Value) error {
	switch at.kind {
	case KindMissing, KindNull:
		*at = v
		return nil
	case KindObject:
		n := ownNode(at, r.g)
		if v.n.lz != nil && v.n.lz.full.Load() == nil {
			// Merging reads each member once: no need to parse the whole.
			for it := newRawIter(v.n.lz.raw); it.next(); {
				n.put(it.key, rawValue(it.val, it.esc))
			}
			return nil
		}
		for _, m := range v.n.m().members {
			n.put(m.Key, m.Value)
		}
		return nil
	}
	return typeError(o.ptr, "target %s is %s, not an object", targetName(o.target), at.kind)
}

// number evaluates by (or value) of increment and decrement, with its sign.
func (r *run) number(o *op) (float64, bool, error) {
	v, err := o.value.eval(&r.s)
	if err != nil || v.kind == KindMissing {
		return 0, false, err
	}
	if v.kind != KindNumber {
		return 0, false, typeError(o.ptr, "by must be a number, not %s (no coercion)", v.kind)
	}
	return o.sign * v.num, true, nil
}

func add(o *op, at *Value, by float64) error {
	switch at.kind {
	case KindMissing, KindNull:
		*at = Number(by)
	case KindNumber:
		if sum := at.num + by; !math.IsNaN(sum) && !math.IsInf(sum, 0) {
			at.num = sum // the number alone: see setNumber
		} else {
			*at = Null()
		}
	default:
		return typeError(o.ptr, "target %s is %s, not a number", targetName(o.target), at.kind)
	}
	return nil
}

// keep retains the items for which the op's predicate equals want. The
// array is copied (or compacted in place when owned) only once an item goes.
func (r *run) keep(o *op, at *Value, want bool) error {
	var buf [4]Value
	fixed, isFixed, err := o.pred.fixedFields(&r.s, &buf)
	if err != nil {
		return err
	}
	if isFixed {
		keepFixed(o, at, fixed, want, r.g)
		return nil
	}
	items := at.n.m().items
	base := len(r.s.Bindings)
	r.s.Bindings = append(r.s.Bindings, Binding{Name: o.as})
	var n *node
	w := 0
	for i, it := range items {
		r.s.Bindings[base].Value = it
		ok, err := o.pred.eval(&r.s)
		if err != nil {
			r.s.Bindings = r.s.Bindings[:base]
			return err
		}
		if ok == want {
			if n != nil {
				n.items[w] = it
			}
			w++
			continue
		}
		if n == nil {
			n = ownNode(at, r.g)
			w = i
		}
	}
	r.s.Bindings = r.s.Bindings[:base]
	if n != nil {
		clear(n.items[w:])
		n.items = n.items[:w]
	}
	return nil
}

// keepFixed is keep for a field predicate whose values do not depend on the
// item, computed once as fixed: no binding, and the items compared where
// they lie.
func keepFixed(o *op, at *Value, fixed []Value, want bool, g uint64) {
	items := at.n.m().items
	i := 0
	for i < len(items) && o.pred.matchFields(&items[i], fixed) == want {
		i++
	}
	if i == len(items) {
		return
	}
	// Item i goes: from here on the array is the session's own, with the
	// items at the same positions.
	n := ownNode(at, g)
	items = n.items
	w := i
	for i++; i < len(items); i++ {
		if o.pred.matchFields(&items[i], fixed) == want {
			items[w] = items[i]
			w++
		}
	}
	clear(items[w:])
	n.items = items[:w]
}

func (r *run) remove(o *op) error {
	at, err := r.array(o, false)
	if at == nil || err != nil {
		return err
	}
	if !o.byValue {
		return r.keep(o, at, false)
	}
	v, err := o.value.eval(&r.s)
	if err != nil || v.kind == KindMissing {
		return err
	}
	var n *node
	w := 0
	for i, it := range at.n.m().items {
		if !Equal(it, v) {
			if n != nil {
				n.items[w] = it
			}
			w++
		} else if n == nil {
			n = ownNode(at, r.g)
			w = i
		}
	}
	if n != nil {
		clear(n.items[w:])
		n.items = n.items[:w]
	}
	return nil
}

func (r *run) mapItems(o *op) error {
	at, err := r.array(o, false)
	if at == nil || err != nil {
		return err
	}
	n := ownNode(at, r.g)
	saved := r.s.State
	base := len(r.s.Bindings)
	for i := range n.items {
		it := n.items[i]
		freeze(it, r.g)
		r.s.Bindings = append(r.s.Bindings[:base], Binding{Name: o.as, Value: it})
		r.s.State = it
		if err = r.ops(o.then); err != nil {
			break
		}
		n.items[i] = r.s.State
	}
	r.s.State = saved
	r.s.Bindings = r.s.Bindings[:base]
	return err
}

func (r *run) updateWhere(o *op) error {
	at, err := r.array(o, false)
	if at == nil || err != nil {
		return err
	}
	base := len(r.s.Bindings)
	err = r.updateItems(o, at, base)
	r.s.Bindings = r.s.Bindings[:base]
	return err
}

func (r *run) updateItems(o *op, at *Value, base int) error {
	var n *node
	for i := range at.n.m().items {
		it := at.n.m().items[i]
		r.s.Bindings = append(r.s.Bindings[:base], Binding{Name: o.as, Value: it})
		ok, err := o.pred.eval(&r.s)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if it.kind != KindObject {
			return typeError(o.ptr, "item %d of %s is %s, not an object", i, targetName(o.target), it.kind)
		}
		m, err := o.value.eval(&r.s)
		if err != nil {
			return err
		}
		if m.kind != KindObject {
			return typeError(o.ptr, "merge must be an object, not %s", m.kind)
		}
		freeze(m, r.g)
		if n == nil {
			n = ownNode(at, r.g)
		}
		in := ownNode(&n.items[i], r.g)
		for _, mm := range m.n.m().members {
			in.put(mm.Key, mm.Value)
		}
	}
	return nil
}

func (r *run) upsert(o *op) error {
	v, ok, err := r.value(o)
	if !ok {
		return err
	}
	want, err := o.key.operand(&r.s)
	if err != nil {
		return err
	}
	at, err := r.array(o, true)
	if err != nil {
		return err
	}
	n := ownNode(at, r.g)
	// Items are moved only once one goes: storing a Value costs a write
	// barrier while the collector marks.
	w := 0
	items := n.items
	for i := range items {
		if !fieldEquals(&items[i], o.field, &want) {
			if w != i {
				items[w] = items[i]
			}
			w++
		}
	}
	clear(items[w:])
	n.items = append(items[:w], v)
	return nil
}

func (r *run) dynamicKey(o *op) error {
	kv, err := o.key.eval(&r.s)
	if err != nil || kv.kind == KindMissing {
		return err
	}
	if kv.kind != KindString {
		return typeError(o.ptr, "key must resolve to a string, not %s", kv.kind)
	}
	key := kv.str
	if o.code == opRemoveAt {
		at, err := r.slot(o, false)
		if at == nil || err != nil || at.kind != KindObject {
			return err
		}
		j := at.n.m().find(key)
		if j < 0 {
			return nil
		}
		n := ownNode(at, r.g)
		last := len(n.members) - 1
		copy(n.members[j:], n.members[j+1:])
		n.members[last] = Member{}
		n.members = n.members[:last]
		return nil
	}
	var v Value
	var by float64
	var ok bool
	if o.code == opIncrementAt {
		by, ok, err = r.number(o)
	} else {
		v, ok, err = r.value(o)
	}
	if !ok {
		return err
	}
	if o.code == opMergeAt && v.kind != KindObject {
		return typeError(o.ptr, "merge_at value must be an object, not %s", v.kind)
	}
	at, err := r.slot(o, true)
	if err != nil {
		return err
	}
	switch at.kind {
	case KindMissing, KindNull:
		*at = newObject(r.g, 4)
	case KindObject:
	default:
		return typeError(o.ptr, "target %s is %s, not an object", targetName(o.target), at.kind)
	}
	n := ownNode(at, r.g)
	j := n.find(key)
	if j < 0 {
		n.members = append(n.members, Member{Key: key})
		j = len(n.members) - 1
	}
	slot := &n.members[j].Value
	switch o.code {
	case opSetAt:
		*slot = v
	case opMergeAt:
		if slot.kind != KindMissing && slot.kind != KindObject {
			err = typeError(o.ptr, "merge_at: key %q holds %s, not an object (use set_at)", key, slot.kind)
		} else {
			err = r.mergeInto(o, slot, v)
		}
	case opIncrementAt:
		err = add(o, slot, by)
	}
	if err != nil && slot.kind == KindMissing {
		n.members = n.members[:j]
	}
	return err
}

func (r *run) let(o *op) error {
	arr, err := o.key.operand(&r.s)
	if err != nil {
		return err
	}
	want, err := o.value.operand(&r.s)
	if err != nil {
		return err
	}
	found := Value{}
	for _, it := range arr.Items() {
		got := it.Get(o.field)
		if got.kind != KindMissing && Equal(got, want) {
			found = it
			break
		}
	}
	freeze(found, r.g)
	r.s.Bindings = append(r.s.Bindings, Binding{Name: o.as, Value: found})
	return nil
}
