package tick

import (
	"fmt"
	"iter"
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
	text     []byte // the block event text is copied into; never rewritten
	applied  int
	err      error
}

// NewReplayer starts from state (the missing Value for an empty stream, or a
// snapshot). handlers maps event types to their compiled handlers; events of
// other types are skipped, as the reader skips events with no handler.
func NewReplayer(handlers map[string]*Handler, state Value) *Replayer {
	rp := &Replayer{handlers: handlers}
	if len(handlers) <= 8 {
		for t, h := range handlers {
			rp.few = append(rp.few, typedHandler{t, h})
		}
	}
	rp.r.g = newSession()
	rp.r.s.State = state
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

// ApplyJSON decodes a stored event (see ParseEvent) and applies it.
func (rp *Replayer) ApplyJSON(raw []byte) error {
	if rp.err != nil {
		return rp.err
	}
	if err := rp.p.parseLazyEvent(rp.keep(raw), &rp.ev); err != nil {
		rp.err = fmt.Errorf("event %d: %w", rp.applied, err)
		return rp.err
	}
	if rp.p.hasTS {
		return rp.apply(&rp.ev, tsCached, rp.p.tsNum)
	}
	return rp.apply(&rp.ev, tsCacheable, 0)
}

// keep copies raw into the current text block and returns the copy. Event
// text is small and pointer-free, so one block holds many events at the cost
// of one allocation, and the collector never scans it; the price is that a
// string kept in state keeps its whole block alive.
func (rp *Replayer) keep(raw []byte) string {
	if len(raw) == 0 || len(raw) > textChunk/8 {
		return string(raw)
	}
	if len(rp.text)+len(raw) > cap(rp.text) {
		rp.text = make([]byte, 0, textChunk)
	}
	at := len(rp.text)
	rp.text = append(rp.text, raw...)
	// The bytes from at on are never written again: appends only go past
	// them, and a full block is replaced, not reused.
	return unsafe.String(&rp.text[at], len(raw))
}

// State returns the state so far. It is frozen: later events copy what they
// change, so the returned Value stays as it is and may be shared.
func (rp *Replayer) State() Value {
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
