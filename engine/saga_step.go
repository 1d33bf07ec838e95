package engine

import (
	"errors"
	"log/slog"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/saga"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
)

// errStopRange ends a Range early once the awaited event is found.
var errStopRange = errors.New("engine: stop range")

// driveSaga takes the actions saga id can take now, each in its own commit record. check asks it
// first to look for an awaited event in the log.
// REQUIRES: set.run held.
func (e *Engine) driveSaga(p *pair, m *model, set *sagaSet, id string, check bool) {
	// Every action moves a step or a compensation forward, so a saga takes at most this many.
	for range 4*spec.MaxSagaSteps + 8 {
		st := set.get(id)
		if st == nil {
			return
		}
		def := sagaDef(m.spec, st)
		if def == nil {
			a := st.Clone()
			a.Status, a.FinishedAt = saga.Failed, e.clock.Now().Unix()
			a.Error = &saga.Error{Message: "spec_changed", Type: "spec_changed", Detail: "the deployed spec no longer defines saga " + st.Type + " with these steps", Step: st.CurrentStep()}
			e.saveSaga(p, set, st, a)
			return
		}
		if check && st.Waiting() != nil {
			check = false
			moved, ok := e.awaitMatch(p, set, def, st)
			if !ok {
				return
			}
			if moved {
				continue
			}
		}
		act := saga.Next(def, st, e.clock.Now().UnixMilli())
		if act.Kind == saga.Idle || !e.sagaAct(p, m, set, st, act) {
			return
		}
		// A failed compensation is tried again at the next poll, not at once: attempts are
		// spread over time so that a passing cause can clear before the saga is dead-lettered.
		if cur := set.get(id); act.Kind == saga.Compensate && cur != nil && cur.Attempts > 0 {
			return
		}
		// A saga that starts waiting looks at the log once: a reply committed before the index
		// knew of the wait notified no one.
		check = act.After.Waiting() != nil
	}
	e.log.Error("BUG: saga does not settle", slog.String("saga", id))
}

// sagaDef returns the definition of st in sp, or nil when sp no longer has it as st knows it.
func sagaDef(sp *spec.Spec, st *saga.State) *spec.Saga {
	for _, d := range sp.Sagas() {
		if d.Name != st.Type || len(d.Steps) != len(st.Steps) {
			continue
		}
		for i, s := range d.Steps {
			if s.Name != st.Steps[i].Name {
				return nil
			}
		}
		return d
	}
	return nil
}

// awaitMatch looks in the awaited stream for the first awaited event after the step's emit.
// moved reports that it was found and the saga moved on; ok is false on a storage error.
func (e *Engine) awaitMatch(p *pair, set *sagaSet, def *spec.Saga, st *saga.State) (moved, ok bool) {
	w := st.Waiting()
	k := storage.StreamKey{Type: w.AwaitType, ID: w.AwaitID}
	n, err := p.store.Length(k)
	if err != nil {
		e.log.Warn("saga cannot read its awaited stream", slog.String("saga", st.ID), slog.Any("err", err))
		return false, false
	}
	if n <= w.AwaitFrom {
		return false, true
	}
	types := def.Steps[st.Current].Await.EventTypes
	var typ string
	var data []byte
	err = p.store.Range(k, w.AwaitFrom+1, n, func(ev storage.Event) error {
		for _, t := range types {
			if ev.Type == t {
				typ, data = ev.Type, append([]byte(nil), ev.Data...)
				return errStopRange
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopRange) {
		e.log.Warn("saga cannot read its awaited stream", slog.String("saga", st.ID), slog.Any("err", err))
		return false, false
	}
	if typ == "" {
		return false, true
	}
	ok = e.saveSaga(p, set, st, saga.Matched(st, typ, data, e.clock.Now().UnixMilli()))
	return ok, ok
}

// saveSaga commits after as the state of its saga and publishes it.
func (e *Engine) saveSaga(p *pair, set *sagaSet, before, after *saga.State) bool {
	if err := commitSaga(p, after); err != nil {
		e.log.Warn("cannot save saga state", slog.String("saga", after.ID), slog.Any("err", err))
		return false
	}
	set.publish(before, after)
	return true
}

// commitSaga writes st, the whole state of its saga, as one record.
func commitSaga(p *pair, st *saga.State) error {
	_, err := p.store.Commit(&storage.Record{Puts: []storage.Put{{Space: sagaSpace, Key: st.ID, Value: st.Encode()}}})
	return err
}

// sagaAct takes one action of st: its event, if any, and the state after it in one record.
// It reports whether the saga moved; false means a storage error to retry at a later pass.
func (e *Engine) sagaAct(p *pair, m *model, set *sagaSet, st *saga.State, act saga.Action) bool {
	now := e.clock.Now()
	if act.Emit == nil {
		return e.saveSaga(p, set, st, act.After)
	}
	fail := func(se *saga.Error) bool {
		return e.saveSaga(p, set, st, saga.EmitFailed(st, act, se, now.UnixMilli()))
	}
	sc, err := st.Scope()
	if err != nil {
		return fail(&saga.Error{Message: "emit_failed", Type: "corrupt_state", Detail: err.Error()})
	}
	r, err := saga.Render(act.Emit, sc)
	if err != nil {
		var re *saga.RenderError
		if errors.As(err, &re) {
			return fail(&saga.Error{Message: "emit_failed", Type: "template_error", Detail: re.Detail, Path: re.Path})
		}
		return fail(&saga.Error{Message: "emit_failed", Type: "template_error", Detail: err.Error()})
	}
	actor := ident.SagaCoordinator
	if act.Kind == saga.Compensate {
		actor = ident.SagaCompensator
	}
	plan, err := write.Prepare(m.spec, m.rules, write.Input{
		AggregateType: r.AggregateType, ID: r.ID, EventType: r.EventType, Body: sagaBody(r.Data, actor),
		Now: now, Prod: p.target.Environment == control.EnvProd,
	})
	if err != nil {
		return fail(emitError(err))
	}
	waiting := act.After.Waiting() != nil
	var awaitKey storage.StreamKey
	var awaitFrom uint64
	if waiting {
		awaitKey = storage.StreamKey{Type: act.After.Steps[act.Step].AwaitType, ID: plan.Stream.ID}
		if awaitKey != plan.Stream {
			if awaitFrom, err = p.store.Length(awaitKey); err != nil {
				e.log.Warn("saga cannot read its awaited stream", slog.String("saga", st.ID), slog.Any("err", err))
				return false
			}
		}
	}
	hooks := e.newWriteHooks(p, m, now, st.Depth)
	defer hooks.release()
	opts := write.Options{
		Expand:      hooks.expand,
		AfterCommit: hooks.after(nil),
		Puts: func(after uint64, _ int) []storage.Put {
			from := awaitFrom
			if waiting && awaitKey == plan.Stream {
				from = after + uint64(len(plan.Events))
			}
			saga.Emitted(&act, r.EventType, r.Data, plan.Stream.ID, from)
			return []storage.Put{{Space: sagaSpace, Key: st.ID, Value: act.After.Encode()}}
		},
	}
	if _, err := write.Commit(p.store, plan, opts); err != nil {
		var pe *problem.Error
		// A conflict is another writer's turn, not the step's failure: the next pass tries again.
		if errors.As(err, &pe) && !errors.Is(pe.Kind, problem.ErrConflict) {
			return fail(emitError(err))
		}
		e.log.Warn("cannot commit a saga step", slog.String("saga", st.ID), slog.Any("err", err))
		return false
	}
	e.cache.Delete(cacheKey(p, m, plan.Stream))
	set.publish(st, act.After)
	return true
}

// sagaBody is the write body of a saga's event: its data and the system agent as actor.
func sagaBody(data []byte, actor string) []byte {
	b := append([]byte(`{"data":`), data...)
	b = append(b, `,"metadata":{"actor":{"type":`...)
	b = canonical.AppendString(b, ident.SystemAgentType)
	b = append(b, `,"id":`...)
	b = canonical.AppendString(b, actor)
	return append(b, `}}}`...)
}

// emitError is the step error of an event the write pipeline refused.
func emitError(err error) *saga.Error {
	se := &saga.Error{Message: "emit_failed", Type: "write_error", Detail: err.Error()}
	var pe *problem.Error
	if errors.As(err, &pe) {
		se.Detail, se.Path = pe.Message, pe.Path
		switch {
		case errors.Is(pe.Kind, problem.ErrInvalid), errors.Is(pe.Kind, problem.ErrMalformed):
			se.Type = "validation_error"
		case errors.Is(pe.Kind, problem.ErrNotFound):
			se.Type = "not_found"
		}
	}
	return se
}
