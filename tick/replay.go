package tick

import (
	"fmt"
	"iter"
	"strings"
	"unsafe"
)

// textChunk is the size of the blocks a Replayer copies event text into:
// the largest that the allocator still serves from its small size classes.
const textChunk = 16 << 10

// Replayer folds events into one state, the way a read replays a stream. It
// owns the state it builds and changes it in place, so a long replay copies
// nothing but what the events bring; the state handed in is never modified.
// A Replayer is not safe for concurrent use.
type Replayer struct {
	handlers map[string]*Handler
	few      []typedHandler // the handlers when there are few: a scan beats hashing
	r        run
	p        parser
	ev       Event
	hint     stampHint
	lent     lentText
	applied  int
	err      error
}

// NewReplayer starts from state (the missing Value for an empty stream, or a
// snapshot). handlers maps event types to their compiled handlers; events of
// other types are skipped, as the reader skips events with no handler.
func NewReplayer(handlers map[string]*Handler, state Value) *Replayer {
	rp := &Replayer{handlers: handlers}
	if len(handlers) <= 8 {
		rp.few = make([]typedHandler, 0, len(handlers))
		for t, h := range handlers {
			rp.few = append(rp.few, typedHandler{t, h})
		}
	}
	rp.r.g = newSession()
	rp.r.s.State = state
	rp.r.lent = &rp.lent
	return rp
}

// Apply applies one event: its handler's operations, then Stamp. After an
// error the Replayer keeps failing with that error.
func (rp *Replayer) Apply(ev *Event) error {
	if rp.err != nil {
		return rp.err
	}
	return rp.apply(ev, tsCacheable, 0)
}

// apply is Apply with what is known of the event's timestamp: tsCached
// when decoding read it (as tsNum), tsCacheable otherwise.
func (rp *Replayer) apply(ev *Event, tsState uint8, tsNum float64) error {
	if ev == nil {
		return fmt.Errorf("%w: event %d is nil", ErrInvalid, rp.applied)
	}
	h := rp.handler(ev.Type)
	if h == nil {
		rp.applied++
		return nil
	}
	r := &rp.r
	r.start(h, r.s.State, ev)
	r.s.tsState, r.s.tsNum = tsState, tsNum
	// The state's created_at is the one the last stamp wrote, if it wrote.
	created := rp.hint.createdAt
	if !rp.hint.stamped {
		created = getAt(r.s.State, "created_at", rp.hint.created)
	}
	if err := r.ops(h.ops); err != nil {
		rp.err = fmt.Errorf("event %d (%s): %w", rp.applied, ev.Type, err)
		return rp.err
	}
	stamp(&r.s.State, created, r.s.timestamp(), r.g, &rp.hint)
	r.s.Event, r.s.tsState = nil, tsOff
	if r.s.hasBefore {
		r.s.before = Value{}
	}
	rp.applied++
	return nil
}

type typedHandler struct {
	typ string
	h   *Handler
}

func (rp *Replayer) handler(typ string) *Handler {
	if rp.few == nil {
		return rp.handlers[typ]
	}
	for i := range rp.few {
		if rp.few[i].typ == typ {
			return rp.few[i].h
		}
	}
	return nil
}

// ApplyJSON decodes a stored event (see ParseEvent) and applies it. raw is
// only read during the call.
//
// The event is decoded where it lies, in raw, and its text is copied only
// when an operation is about to store something made from it (see
// lentText.own): an increment reads its number and keeps nothing, so most
// of a stream's text is never copied.
func (rp *Replayer) ApplyJSON(raw []byte) error {
	if rp.err != nil {
		return rp.err
	}
	rp.lent.lend(unsafe.String(unsafe.SliceData(raw), len(raw)))
	defer rp.lent.end(&rp.ev, &rp.p)
	if err := rp.p.parseLazyEvent(rp.lent.text, &rp.ev); err != nil {
		rp.err = fmt.Errorf("event %d: %w", rp.applied, err)
		return rp.err
	}
	if rp.p.hasTS {
		return rp.apply(&rp.ev, tsCached, rp.p.tsNum)
	}
	return rp.apply(&rp.ev, tsCacheable, 0)
}

// lentText is the text of the event a Replayer is applying while it is
// still the caller's buffer, and the block that text is copied into once
// something is to keep it.
//
// Invariant: no value in state refers to the caller's buffer. Every
// operation that stores a value made from the event calls own first (see
// textUse), which copies the text the value may come from into the block
// and points the event at the copy, so that the value is made from the
// copy. Predicates and lookups only read.
type lentText struct {
	text      string // the caller's buffer; "" when nothing is lent
	dataOwned bool   // the event's data was moved to the block alone
	block     []byte // never rewritten: appends only go past what was kept
}

func (l *lentText) lend(text string) {
	l.text, l.dataOwned = text, false
}

// own moves to the block what of the event use says a value may come from:
// nothing for a timestamp already read as a number, the data alone for
// paths under "$.data", the whole event otherwise.
func (l *lentText) own(ev *Event, use textUse, tsCached bool) {
	switch use {
	case keepsTimestamp:
		if tsCached {
			return
		}
	case keepsData:
		if !l.dataOwned {
			l.dataOwned = true
			if t := l.valueText(ev.Data); t != "" {
				l.moveValue(&ev.Data, l.keep(t), t)
			}
		}
		return
	}
	old := l.text
	moved := l.keep(old)
	ev.Key = l.rebase(ev.Key, moved, old)
	ev.Type = l.rebase(ev.Type, moved, old)
	ev.ID = l.rebase(ev.ID, moved, old)
	ev.AggregateType = l.rebase(ev.AggregateType, moved, old)
	l.moveValue(&ev.Data, moved, old)
	l.moveValue(&ev.Metadata, moved, old)
	l.text = ""
}

// valueText is the lent text of v: its string, or the text of its lazy
// node; "" if v holds none.
func (l *lentText) valueText(v Value) string {
	var t string
	switch v.kind {
	case KindString:
		t = v.str
	case KindArray, KindObject:
		if v.n.lz == nil {
			return ""
		}
		t = v.n.lz.raw
	}
	if _, ok := l.offset(t); !ok {
		return ""
	}
	return t
}

// moveValue points *v, a value of the event as decoded (a scalar, or a
// lazy node over its text), at moved, the copy of old, if it lies in the
// lent text. A lazy node is changed in place: only the event refers to it,
// and the parsed form, which would slice the old text, is dropped.
func (l *lentText) moveValue(v *Value, moved, old string) {
	switch v.kind {
	case KindString:
		v.str = l.rebase(v.str, moved, old)
	case KindArray, KindObject:
		if v.n.lz == nil {
			break
		}
		if _, ok := l.offset(v.n.lz.raw); ok {
			v.n.lz.raw = l.rebase(v.n.lz.raw, moved, old)
			if v.n.lz.full.Load() != nil {
				v.n.lz.full.Store(nil)
			}
		}
	}
}

// rebase returns s, if it lies in old within the lent text, as the same
// bytes of moved.
func (l *lentText) rebase(s, moved, old string) string {
	at, ok := l.offset(s)
	if !ok {
		return s
	}
	base, _ := l.offset(old)
	return moved[at-base : at-base+len(s)]
}

// offset is where s starts in the lent text, if it lies there.
func (l *lentText) offset(s string) (int, bool) {
	if len(s) == 0 || len(l.text) == 0 {
		return 0, false
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(l.text)))
	return int(off), off < uintptr(len(l.text))
}

// end forgets the lent text once the event is applied. Lazy nodes still
// over it were never stored (own would have moved them), so those at the
// end of the parser's chunk are given back for the next event, which spares
// allocating them for every event that keeps nothing; lazyValue overwrites
// them. The others (a repeated "data", or data in the previous chunk when
// this event started a new one) are emptied, so that the chunk, which a
// neighbour kept in state may keep alive, does not keep the caller's buffer
// too. (The event and the parser, which still refer to it, are overwritten
// by the next event; State empties what was given back.)
func (l *lentText) end(ev *Event, p *parser) {
	if l.text == "" {
		return
	}
	kept := len(p.lazy)
	for kept > p.lazyMark {
		if _, ok := l.offset(p.lazy[kept-1].t.raw); !ok {
			break
		}
		kept--
	}
	given := p.lazy[kept:]
	p.lazy = p.lazy[:kept]
	for i := p.lazyMark; i < kept; i++ {
		l.forget(&p.lazy[i].n)
	}
	for _, n := range [2]*node{ev.Data.n, ev.Metadata.n} {
		if n != nil && (len(given) == 0 || uintptr(unsafe.Pointer(n)) < uintptr(unsafe.Pointer(&given[0])) ||
			uintptr(unsafe.Pointer(n)) > uintptr(unsafe.Pointer(&given[len(given)-1]))) {
			l.forget(n)
		}
	}
	l.text = ""
}

// forget empties n if it is a lazy node over the lent text.
func (l *lentText) forget(n *node) {
	if n.lz == nil {
		return
	}
	if _, ok := l.offset(n.lz.raw); ok {
		n.lz.raw = ""
		if n.lz.full.Load() != nil {
			n.lz.full.Store(nil)
		}
	}
}

// keep copies text into the current block and returns the copy. Event text
// is small and pointer-free, so one block holds many events at the cost of
// one allocation, and the collector never scans it; the price is that a
// string kept in state keeps its whole block alive.
func (l *lentText) keep(text string) string {
	if len(text) == 0 || len(text) > textChunk/8 {
		return strings.Clone(text)
	}
	if len(l.block)+len(text) > cap(l.block) {
		l.block = make([]byte, 0, textChunk)
	}
	at := len(l.block)
	l.block = append(l.block, text...)
	return unsafe.String(&l.block[at], len(text))
}

// State returns the state so far. It is frozen: later events copy what they
// change, so the returned Value stays as it is and may be shared.
func (rp *Replayer) State() Value {
	// The chunk the state may keep alive must not keep the last events'
	// buffers alive through the nodes given back (see lentText.end).
	for i := len(rp.p.lazy); i < cap(rp.p.lazy); i++ {
		ln := &rp.p.lazy[:cap(rp.p.lazy)][i]
		ln.t.raw = ""
		if ln.t.full.Load() != nil {
			ln.t.full.Store(nil)
		}
	}
	freeze(rp.r.s.State, rp.r.g)
	rp.r.g = newSession()
	return rp.r.s.State
}

// Applied is the number of events applied (or skipped for having no handler).
func (rp *Replayer) Applied() int { return rp.applied }

// Replay folds stored events, as raw JSON, into state and returns the result.
func Replay(handlers map[string]*Handler, state Value, events iter.Seq[[]byte]) (Value, error) {
	rp := NewReplayer(handlers, state)
	for raw := range events {
		if err := rp.ApplyJSON(raw); err != nil {
			return Value{}, err
		}
	}
	return rp.State(), nil
}
