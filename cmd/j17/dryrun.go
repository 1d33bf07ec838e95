package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// dryRun folds the events of `j17 events dry-run` into aggregates, each event as one write
// request of the server: its implications expand with the engine's own expander against S0 (the
// aggregates before the event), and the event and everything it implies apply together or, when
// any of them is refused, not at all. Schedules and sagas are listed, never run: a dry run has
// no clock to fire them and no runner to step them.
type dryRun struct {
	s      *spec.Spec
	x      implication.Expander
	states map[string]tick.Value
	now    func() time.Time
	// notes receives the schedules and sagas the events would start, and the cancels of
	// pending holds, as the server would, against the events that follow.
	notes   io.Writer
	pending []dryRunSchedule
}

// dryRunSchedule is a schedule a dry run listed, with where it was listed.
type dryRunSchedule struct {
	where string
	s     implication.Scheduled
}

func newDryRun(s *spec.Spec, rules ident.Rules, limits implication.Limits, notes io.Writer) *dryRun {
	d := &dryRun{s: s, states: map[string]tick.Value{}, now: time.Now, notes: notes}
	d.x = implication.Expander{Spec: s, Rules: rules, Limits: limits, State: d.s0, MaxDataDepth: write.MaxDataDepth}
	return d
}

// s0 is the state of k before the event being applied: states change only once an event and
// all it implies are accepted.
func (d *dryRun) s0(k storage.StreamKey) (tick.Value, error) {
	if v, ok := d.states[k.String()]; ok {
		return v, nil
	}
	return tick.Object(), nil
}

// apply runs one checked event (key is its canonical "type:id") with its implications; where
// prefixes its notes.
func (d *dryRun) apply(where, key string, ev *spec.Event, raw []byte) error {
	te, err := tick.ParseEvent(raw)
	if err != nil {
		return err
	}
	stampEvent(te, d.now)
	te.Key = key
	te.AggregateType, te.ID, _ = strings.Cut(key, ":")
	stream := storage.StreamKey{Type: te.AggregateType, ID: te.ID}
	ts, _ := te.Timestamp()
	res, err := d.x.Expand([]implication.Trigger{{
		Stream: stream, Spec: ev, Data: te.Data.AppendJSON(nil), Metadata: te.Metadata.AppendJSON(nil), Timestamp: int64(ts),
	}}, false)
	if err != nil {
		return err
	}
	next := map[string]tick.Value{}
	if err := d.fold(next, ev, te); err != nil {
		return err
	}
	sagas := d.s.SagasTriggeredBy(stream.Type, ev.Type)
	written := []implication.Match{{AggregateType: stream.Type, ID: stream.ID, EventType: ev.Type}}
	for _, im := range res.Events {
		iev, ok := d.s.Event(im.Stream.Type, im.Event.Type)
		if !ok {
			return fmt.Errorf("BUG: implied event %s.%s is not in the spec", im.Stream.Type, im.Event.Type)
		}
		data, err := tick.ParseJSON(im.Event.Data)
		if err != nil {
			return err
		}
		meta, err := tick.ParseJSON(im.Event.Metadata)
		if err != nil {
			return err
		}
		ite := &tick.Event{Key: im.Stream.String(), AggregateType: im.Stream.Type, ID: im.Stream.ID, Type: iev.Type, Data: data, Metadata: meta}
		if err := d.fold(next, iev, ite); err != nil {
			return fmt.Errorf("implied %s.%s on %s: %w", im.Stream.Type, iev.Type, im.Stream, err)
		}
		sagas = append(sagas, d.s.SagasTriggeredBy(im.Stream.Type, iev.Type)...)
		written = append(written, implication.Match{AggregateType: im.Stream.Type, ID: im.Stream.ID, EventType: iev.Type})
	}
	for k, v := range next {
		d.states[k] = v
	}
	d.cancel(where, written)
	for _, sc := range res.Schedules {
		fmt.Fprintf(d.notes, "%s: note: would schedule %s.%s on %s in %s%s; a dry run fires no scheduled event\n",
			where, sc.Target.Type, sc.EventType, sc.Target, sc.Delay, cancelText(sc.CancelOn))
		if len(sc.CancelOn) > 0 {
			d.pending = append(d.pending, dryRunSchedule{where: where, s: sc})
		}
	}
	for _, sg := range sagas {
		fmt.Fprintf(d.notes, "%s: note: would start saga %q; a dry run runs no saga\n", where, sg.Name)
	}
	return nil
}

// cancel notes, and forgets, the listed schedules that the written events cancel; like the
// server it looks only at schedules of earlier events.
func (d *dryRun) cancel(where string, written []implication.Match) {
	keep := d.pending[:0]
	for _, p := range d.pending {
		if hit := matchAny(p.s.CancelOn, written); hit != nil {
			fmt.Fprintf(d.notes, "%s: note: %s:%s.%s cancels the schedule of %s.%s on %s listed at %s\n",
				where, hit.AggregateType, hit.ID, hit.EventType, p.s.Target.Type, p.s.EventType, p.s.Target, p.where)
			continue
		}
		keep = append(keep, p)
	}
	d.pending = keep
}

func matchAny(patterns, written []implication.Match) *implication.Match {
	for _, w := range written {
		for _, p := range patterns {
			if p == w {
				return &w
			}
		}
	}
	return nil
}

// fold runs ev's handler on the state its aggregate has in next, or else in d.states.
func (d *dryRun) fold(next map[string]tick.Value, ev *spec.Event, te *tick.Event) error {
	st, ok := next[te.Key]
	if !ok {
		if st, ok = d.states[te.Key]; !ok {
			st = tick.Object()
		}
	}
	if ev.Handler != nil {
		var err error
		if st, err = ev.Handler.Apply(st, te); err != nil {
			return fmt.Errorf("handler: %w", err)
		}
	}
	next[te.Key] = st
	return nil
}

func cancelText(on []implication.Match) string {
	if len(on) == 0 {
		return ""
	}
	parts := make([]string, len(on))
	for i, m := range on {
		parts[i] = m.AggregateType + ":" + m.ID + "." + m.EventType
	}
	return ", canceled by " + strings.Join(parts, " or ")
}
