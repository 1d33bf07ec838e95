package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/saga"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// writeHook is one feature's part in a write. expand adds to the record before the commit (and
// again, on a fresh record, for a retry); committed runs once the record is durable, with what
// the last expand added. A hook that counts against a limit reserves its room in expand, turns
// it into the real thing in committed, and gives back in release whatever committed did not
// take: release runs once the write is over, whether or not it committed.
type writeHook interface {
	expand(p *write.Plan, rec *storage.Record) (implied int, err error)
	committed()
	release()
}

// idleHook is a writeHook that can tell before the commit that it will add nothing to a plan.
// A write whose hooks are all idle commits without an Expander, and so keeps the write
// package's cheapest path (no length read, no internal OCC) for records that depend on nothing.
type idleHook interface {
	idle(p *write.Plan) bool
}

// writeHooks runs hooks in order; each sees the record the earlier ones built.
type writeHooks []writeHook

// statelessHook is a writeHook that can tell before the commit that what it adds to a plan
// depends neither on the state nor on the length of the plan's stream.
type statelessHook interface {
	stateless(p *write.Plan) bool
}

// options returns the write.Options.Expand and Stateless of a plan, asking each hook once:
// Expand is nil when every hook is idle for it; Stateless holds when every hook is idle or
// stateless.
func (hs writeHooks) options(p *write.Plan) (expand write.Expander, stateless bool) {
	stateless = true
	for _, h := range hs {
		if ih, ok := h.(idleHook); ok && ih.idle(p) {
			continue
		}
		expand = hs.expand
		if sh, ok := h.(statelessHook); !ok || !sh.stateless(p) {
			stateless = false
		}
	}
	return expand, stateless
}

func (hs writeHooks) expand(p *write.Plan, rec *storage.Record) (int, error) {
	total := 0
	for _, h := range hs {
		n, err := h.expand(p, rec)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// release ends a write: every hook gives back the room it still holds. Callers defer it.
func (hs writeHooks) release() {
	for _, h := range hs {
		h.release()
	}
}

// after returns the AfterCommit of a write: the hooks' committed, then next when set.
func (hs writeHooks) after(next func()) func() {
	return func() {
		for _, h := range hs {
			h.committed()
		}
		if next != nil {
			next()
		}
	}
}

// newWriteHooks returns the hooks of a write, in order: implications, schedule cancels, sagas.
// depth is the saga chain depth of the saga writing the request, 0 for any other write. The
// hooks take one allocation together.
func (e *Engine) newWriteHooks(p *pair, m *model, now time.Time, depth int) writeHooks {
	all := &struct {
		implications implicationHook
		cancels      cancelHook
		sagas        sagaHook
		list         [3]writeHook
		// touched is room for the one stream of a write without implications.
		touched [1]saga.Key
	}{
		implications: implicationHook{e: e, p: p, m: m, now: now, sagaDepth: depth},
		cancels:      cancelHook{p: p, now: now},
		sagas:        sagaHook{e: e, p: p, m: m, depth: depth},
	}
	all.list = [3]writeHook{&all.implications, &all.cancels, &all.sagas}
	all.sagas.touched = all.touched[:0]
	return all.list[:]
}

// implicationHook adds a write's implied events and schedules to its record.
type implicationHook struct {
	e   *Engine
	p   *pair
	m   *model
	now time.Time
	// sagaDepth is the chain depth of the saga writing the request, 0 for any other write: past
	// MaxSagaDepth the events of the record schedule nothing (the Sagas page's chain limit).
	sagaDepth int
	// created holds the schedules of the last expand, and held the room reserved for them.
	created []*schedule.Record
	held    *schedule.Reservation
	// newTrigger is the trigger's stream when the last expand's record expects it empty.
	newTrigger storage.StreamKey
}

func (h *implicationHook) idle(plan *write.Plan) bool {
	for _, t := range plan.Triggers {
		if len(t.Implications) > 0 {
			return false
		}
	}
	return true
}

// stateless: S0 is the only state implications read, and only the event types whose chain
// reads it need it.
func (h *implicationHook) stateless(plan *write.Plan) bool {
	for _, t := range plan.Triggers {
		if t.ChainReadsState {
			return false
		}
	}
	return true
}

func (h *implicationHook) expand(plan *write.Plan, rec *storage.Record) (int, error) {
	h.release()
	h.created = h.created[:0]
	triggers := make([]implication.Trigger, 0, len(plan.Events))
	has := false
	for i, ev := range plan.Events {
		has = has || len(plan.Triggers[i].Implications) > 0
		triggers = append(triggers, implication.Trigger{Stream: plan.Stream, Spec: plan.Triggers[i], Data: ev.Data, Metadata: ev.Metadata, Timestamp: ev.Timestamp})
	}
	if !has {
		return 0, nil
	}
	// Under internal OCC the record commits only if the trigger's stream still has the length
	// read for it; when that length is 0, S0 is the empty object without another read.
	h.newTrigger = storage.StreamKey{}
	if a := rec.Appends[0]; a.Stream == plan.Stream && a.Expect == (storage.Expect{Kind: storage.Any}) {
		h.newTrigger = plan.Stream
	}
	x := implication.Expander{Spec: h.m.spec, Rules: h.m.rules, Limits: h.e.limits, State: h.s0, MaxDataDepth: write.MaxDataDepth}
	res, err := x.Expand(triggers, plan.Batch)
	if err != nil {
		return 0, err
	}
	appendImplied(rec, res.Events)
	if err := h.schedule(res.Schedules, rec); err != nil {
		return 0, err
	}
	return len(res.Events), nil
}

// appendImplied adds implied events to rec in appends of their own, after the trigger's: a
// stream's events keep the order in which they were implied, and the trigger's append stays the
// first. The new appends' events share one array, sized by a first pass.
func appendImplied(rec *storage.Record, events []implication.Implied) {
	if len(events) == 0 {
		return
	}
	var slotBuf, countBuf [32]int
	var streamBuf [32]storage.StreamKey
	// slots[i] is the new append of events[i], counts[j] the number of events of streams[j].
	slots, counts, streams := slotBuf[:0], countBuf[:0], streamBuf[:0]
	var index map[storage.StreamKey]int
	for _, im := range events {
		var j int
		var ok bool
		if index != nil {
			j, ok = index[im.Stream]
		} else {
			j = slices.Index(streams, im.Stream)
			ok = j >= 0
		}
		if !ok {
			j = len(streams)
			streams = append(streams, im.Stream)
			counts = append(counts, 0)
			switch {
			case index != nil:
				index[im.Stream] = j
			case len(streams) > linearStreams:
				// Past a handful of streams a linear search costs more than a map.
				index = make(map[storage.StreamKey]int, 2*len(streams))
				for k, st := range streams {
					index[st] = k
				}
			}
		}
		counts[j]++
		slots = append(slots, j)
	}
	first := len(rec.Appends)
	rec.Appends = slices.Grow(rec.Appends, len(streams))
	all := make([]storage.NewEvent, len(events))
	off := 0
	for j, st := range streams {
		rec.Appends = append(rec.Appends, storage.Append{Stream: st, Expect: storage.Expect{Kind: storage.Skip}, Events: all[off : off : off+counts[j]]})
		off += counts[j]
	}
	for i, im := range events {
		a := &rec.Appends[first+slots[i]]
		a.Events = append(a.Events, im.Event)
	}
}

// linearStreams is how many streams appendImplied finds by linear search.
const linearStreams = 16

// s0 is the state of a stream before the request.
func (h *implicationHook) s0(k storage.StreamKey) (tick.Value, error) {
	tm := h.m.types[k.Type]
	empty := tick.Object()
	if tm == nil || k == h.newTrigger {
		return empty, nil
	}
	info, err := h.p.store.Info(k)
	if err != nil {
		return tick.Value{}, err
	}
	if info.Length == 0 {
		return empty, nil
	}
	ent, err := h.e.state(h.p, h.m, tm, k, info, true)
	if err != nil {
		return tick.Value{}, err
	}
	return ent.State, nil
}

// schedule turns resolved schedules into record puts, within the limits per aggregate and per
// pair, reserving their room until the write ends.
func (h *implicationHook) schedule(list []implication.Scheduled, rec *storage.Record) error {
	if len(list) == 0 {
		return nil
	}
	if h.sagaDepth+1 > MaxSagaDepth {
		for _, s := range list {
			rec.Puts = append(rec.Puts, h.e.depthExceeded("schedule", s.Source, s.EventType, h.sagaDepth+1, h.now.UnixMilli()))
		}
		return nil
	}
	adds := map[storage.StreamKey]int{}
	for _, s := range list {
		adds[s.Source]++
	}
	held, err := h.p.sched.Reserve(adds)
	var le *schedule.LimitError
	switch {
	case errors.As(err, &le) && le.PerPair:
		return problem.New(problem.ErrInvalid, "This environment would have more than %d pending scheduled events; nothing was written", schedule.MaxPerPair)
	case errors.As(err, &le):
		return problem.New(problem.ErrInvalid, "Aggregate %s would have more than %d pending scheduled events; nothing was written", le.Source, schedule.MaxPerAggregate)
	case err != nil:
		return err
	}
	h.held = held
	for _, s := range list {
		r := &schedule.Record{
			ID: ident.NewV7(h.now), AggregateType: s.Target.Type, AggregateID: s.Target.ID, EventType: s.EventType,
			Data: s.Data, FireAt: h.now.Add(s.Delay).UnixMilli(), CreatedAt: h.now.UnixMilli(),
			SourceType: s.Source.Type, SourceID: s.Source.ID, ImpliedBy: s.By, CancelOn: s.CancelOn,
		}
		rec.Puts = append(rec.Puts, storage.Put{Space: schedule.Space, Key: schedule.RecordKey(r.ID), Value: r.Encode()})
		h.created = append(h.created, r)
	}
	return nil
}

func (h *implicationHook) committed() {
	h.held.Commit(h.created)
	h.held = nil
}

func (h *implicationHook) release() {
	h.held.Release()
	h.held = nil
}

// cancelHook cancels the pending schedules whose cancel_on matches an event of the record, in
// the same record.
type cancelHook struct {
	p   *pair
	now time.Time
	ids []string
}

func (h *cancelHook) idle(*write.Plan) bool { return !h.p.sched.HasCancels() }

func (h *cancelHook) expand(_ *write.Plan, rec *storage.Record) (int, error) {
	h.ids = h.ids[:0]
	if !h.p.sched.HasCancels() {
		return 0, nil
	}
	seen := map[string]bool{}
	for _, a := range rec.Appends {
		for _, ev := range a.Events {
			for _, id := range h.p.sched.Canceled(a.Stream, ev.Type) {
				if seen[id] {
					continue
				}
				seen[id] = true
				h.ids = append(h.ids, id)
				m := schedule.Marker{At: h.now.UnixMilli(), Reason: fmt.Sprintf("%s.%s", a.Stream, ev.Type)}
				rec.Puts = append(rec.Puts, storage.Put{Space: schedule.Space, Key: schedule.CanceledKey(id), Value: m.Encode()})
			}
		}
	}
	return 0, nil
}

func (*cancelHook) release() {}

func (h *cancelHook) committed() {
	for _, id := range h.ids {
		h.p.sched.Settle(id, schedule.Canceled)
	}
}

// implicationLimits fills the zero fields of l with the defaults.
func implicationLimits(l implication.Limits) implication.Limits {
	if l.MaxDepth == 0 {
		l.MaxDepth = implication.DefaultLimits.MaxDepth
	}
	if l.MaxTotal == 0 {
		l.MaxTotal = implication.DefaultLimits.MaxTotal
	}
	return l
}
