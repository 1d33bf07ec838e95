package engine

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/saga"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// Saga limits of the Sagas page.
const (
	// MaxRunningSagas bounds the running sagas of one (instance, environment); a write that would
	// start more is refused.
	MaxRunningSagas = 100
	// MaxSagaDepth is the saga chain depth: a saga started by a saga's event has the depth of
	// that saga plus one, and none deeper than this starts.
	MaxSagaDepth = 3
)

// sagaAuditSpace holds the audit entries of saga hooks skipped for their depth.
const sagaAuditSpace = "saga_audit"

// sagaHook is the saga part of one write: expand creates, in the write's record, the sagas its
// events trigger; committed then hands them to the runner and tells it which aggregates got
// events, for the sagas awaiting them.
type sagaHook struct {
	e     *Engine
	p     *pair
	m     *model
	depth int
	// created and touched are what the last expand added; a retried commit expands again.
	created []*saga.State
	touched []saga.Key
}

// idle reports that a plan starts no saga: none of its own events is a saga trigger. Implied
// events that might be come only with implications, whose hook is then not idle, so expand
// still sees them. An idle plan's stream is still touched: a plain write may be an awaited reply.
func (h *sagaHook) idle(plan *write.Plan) bool {
	for _, ev := range plan.Events {
		if len(h.m.spec.SagasTriggeredBy(plan.Stream.Type, ev.Type)) > 0 {
			return false
		}
	}
	h.created = h.created[:0]
	h.touched = append(h.touched[:0], saga.Key{Type: plan.Stream.Type, ID: plan.Stream.ID})
	return true
}

// expand is the saga writeHook. It looks at every event of the record, implied ones included,
// and reserves a running place for each saga it creates.
func (h *sagaHook) expand(_ *write.Plan, rec *storage.Record) (int, error) {
	h.release()
	h.touched = slices.Grow(h.touched[:0], len(rec.Appends))
	now := h.e.clock.Now()
	for _, app := range rec.Appends {
		h.touched = append(h.touched, saga.Key{Type: app.Stream.Type, ID: app.Stream.ID})
		var state tick.Value
		upTo := -1
		for i, ev := range app.Events {
			defs := h.m.spec.SagasTriggeredBy(app.Stream.Type, ev.Type)
			if len(defs) == 0 {
				continue
			}
			if h.depth+1 > MaxSagaDepth {
				rec.Puts = append(rec.Puts, h.e.depthExceeded("saga", app.Stream, ev.Type, h.depth+1, now.UnixMilli()))
				continue
			}
			if upTo < 0 {
				s, err := h.e.sagaBaseState(h.p, h.m, app.Stream)
				if err != nil {
					return 0, err
				}
				state = s
			}
			for ; upTo < i; upTo++ {
				state = h.m.applyOne(app.Stream, app.Events[upTo+1], state)
			}
			snap := state.AppendJSON(nil)
			for _, d := range defs {
				if !h.p.sagas.reserve() {
					return 0, problem.New(problem.ErrInvalid, "Saga %q cannot start: %d sagas are already running, the most an instance may run", d.Name, MaxRunningSagas)
				}
				names := make([]string, len(d.Steps))
				for j, s := range d.Steps {
					names[j] = s.Name
				}
				st := saga.New(newSagaID(now.UnixMilli()), d.Name, names, h.depth+1, saga.Event{
					AggregateType: app.Stream.Type, ID: app.Stream.ID, Type: ev.Type, Data: ev.Data, Metadata: ev.Metadata,
				}, snap, now.Unix())
				// Appended at once: release gives back one place per created saga.
				h.created = append(h.created, st)
				rec.Puts = append(rec.Puts, storage.Put{Space: sagaSpace, Key: st.ID, Value: st.Encode()})
			}
		}
	}
	return 0, nil
}

// committed runs after the write's record is durable: the created sagas take their reserved
// places.
func (h *sagaHook) committed() {
	for _, st := range h.created {
		h.p.sagas.admit(nil, st)
	}
	if len(h.created) > 0 {
		h.e.sagas.signal()
	}
	h.created = h.created[:0]
	h.e.notifySagas(h.p.sagas, h.touched)
}

// release gives back the places of sagas the write did not commit.
func (h *sagaHook) release() {
	h.p.sagas.unreserve(len(h.created))
	h.created = h.created[:0]
}

// depthExceeded is the audit entry of a saga or schedule hook skipped because the event that
// would run it was written by a saga at the deepest chain depth; hook names which.
func (e *Engine) depthExceeded(hook string, k storage.StreamKey, eventType string, depth int, nowMs int64) storage.Put {
	e.log.Warn("saga_depth_exceeded: "+hook+" hooks skipped", slog.String("stream", k.String()),
		slog.String("event_type", eventType), slog.Int("depth", depth))
	v, _ := json.Marshal(map[string]any{
		"action": "saga_depth_exceeded", "hook": hook, "aggregate_type": k.Type, "id": k.ID, "event_type": eventType,
		"depth": depth, "max_depth": MaxSagaDepth, "at": nowMs / 1000,
	})
	return storage.Put{Space: sagaAuditSpace, Key: newSagaID(nowMs), Value: v}
}

// sagaBaseState is the state of k as the index has it now: the state the write's events follow.
func (e *Engine) sagaBaseState(p *pair, m *model, k storage.StreamKey) (tick.Value, error) {
	tm := m.types[k.Type]
	if tm == nil {
		return tick.Object(), nil
	}
	info, err := p.store.Info(k)
	if err != nil {
		return tick.Value{}, err
	}
	if info.Length == 0 {
		return tick.Value{}, nil
	}
	ent, err := e.state(p, m, tm, k, info, true)
	if err != nil {
		return tick.Value{}, err
	}
	return ent.State, nil
}

// applyOne folds one new event into state as a read would. An event the handlers refuse leaves
// the state unchanged: the snapshot is the saga's view, and the write itself was already checked.
func (m *model) applyOne(k storage.StreamKey, ev storage.NewEvent, state tick.Value) tick.Value {
	data, err := tick.ParseJSON(ev.Data)
	if err != nil {
		return state
	}
	meta, err := tick.ParseJSON(ev.Metadata)
	if err != nil {
		meta = tick.Object()
	}
	te := &tick.Event{Key: k.String(), AggregateType: k.Type, ID: k.ID, Type: ev.Type, Data: data, Metadata: meta}
	if tm := m.types[k.Type]; tm != nil {
		if h := tm.handlers[ev.Type]; h != nil {
			if next, err := h.Apply(state, te); err == nil {
				return next
			}
			return state
		}
	}
	return tick.Stamp(state, state, te)
}

// newSagaID returns "saga_" and 20 hex digits: the creation millisecond, then random bits, so
// that ids sort by creation.
func newSagaID(nowMs int64) string {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	return fmt.Sprintf("saga_%012x%08x", uint64(nowMs)&0xffffffffffff, binary.BigEndian.Uint32(r[:]))
}
