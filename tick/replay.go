package tick

import (
	"fmt"
	"iter"
)

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
	created := getAt(r.s.State, "created_at", rp.hint.created)
	if err := r.ops(h.ops); err != nil {
		rp.err = fmt.Errorf("event %d (%s): %w", rp.applied, ev.Type, err)
		return rp.err
	}
	stamp(&r.s.State, created, ev, r.g, &rp.hint)
	r.s.Event, r.s.before = nil, Value{}
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
	if err := rp.p.parseEvent(raw, &rp.ev); err != nil {
		rp.err = fmt.Errorf("event %d: %w", rp.applied, err)
		return rp.err
	}
	return rp.Apply(&rp.ev)
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
