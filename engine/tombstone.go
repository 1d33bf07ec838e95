package engine

import (
	"errors"
	"math"
	"strings"
	"sync"

	"github.com/j17-go/j17/engine/audit"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/storage"
)

// tombstoneMu serializes tombstone executions: they are rare, long, and must not interleave
// their progress records.
var tombstoneMu sync.Mutex

// TombstoneExecution tunes ExecuteTombstone.
type TombstoneExecution struct {
	// Force executes before the grace period ends; it is logged as a warning.
	Force bool
	// Hook runs at each step of the execution; an error stops it there as a crash would. For
	// crash tests.
	Hook func(tombstone.Step) error
}

// tombstoneProblem turns the sentinels of package tombstone into refusals the api can answer.
func tombstoneProblem(err error) error {
	msg := func() string { return strings.TrimPrefix(err.Error(), "tombstone: ") }
	switch {
	case errors.Is(err, tombstone.ErrNotFound):
		return problem.New(problem.ErrNotFound, "%s", msg())
	case errors.Is(err, tombstone.ErrInvalid), errors.Is(err, tombstone.ErrGracePeriod):
		return problem.New(problem.ErrInvalid, "%s", msg())
	case errors.Is(err, tombstone.ErrState):
		return problem.New(problem.ErrConflict, "%s", msg())
	}
	return err
}

// CreateTombstone requests the erasure of aggregate typ:id, which must hold events.
func (e *Engine) CreateTombstone(t Target, typ, id string, req tombstone.Request) (tombstone.Tombstone, error) {
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return tombstone.Tombstone{}, err
	}
	n, err := p.store.Length(k)
	if err != nil {
		return tombstone.Tombstone{}, err
	}
	if n == 0 {
		return tombstone.Tombstone{}, notFound()
	}
	ts, err := tombstone.Create(p.store, e.clock.Now(), k, req)
	return ts, tombstoneProblem(err)
}

// Tombstones lists the tombstones of t, oldest first.
func (e *Engine) Tombstones(t Target) ([]tombstone.Tombstone, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	return tombstone.List(p.store)
}

// Tombstone returns one tombstone.
func (e *Engine) Tombstone(t Target, id string) (tombstone.Tombstone, error) {
	p, err := e.open(t)
	if err != nil {
		return tombstone.Tombstone{}, err
	}
	ts, err := tombstone.Get(p.store, id)
	return ts, tombstoneProblem(err)
}

// CancelTombstone cancels a pending tombstone.
func (e *Engine) CancelTombstone(t Target, id string) (tombstone.Tombstone, error) {
	p, err := e.open(t)
	if err != nil {
		return tombstone.Tombstone{}, err
	}
	ts, err := tombstone.Cancel(p.store, e.clock.Now(), id)
	return ts, tombstoneProblem(err)
}

// ExecuteTombstone executes a tombstone, or finishes one a crash interrupted: it records the
// pre-tombstone root (a root anchor), rewrites the tombstoned stream and every stream its
// onTombstone rules cascade to, clears their cached states and snapshots, cancels their
// scheduled events, and erases the copies of their payloads in checkpoints, scheduled events and
// sagas (purgeCopies).
func (e *Engine) ExecuteTombstone(t Target, id string, x TombstoneExecution) (tombstone.Tombstone, error) {
	p, err := e.open(t)
	if err != nil {
		return tombstone.Tombstone{}, err
	}
	tombstoneMu.Lock()
	defer tombstoneMu.Unlock()
	m := p.model.Load()
	var sp *spec.Spec
	if m != nil {
		sp = m.spec
	}
	env := tombstone.Env{
		Store: p.store, Spec: sp, RefsComplete: e.refsComplete(t), Now: e.clock.Now(), Hook: x.Hook,
		Log: e.log.With("instance", t.Instance, "environment", t.Environment),
		Root: func() (string, error) {
			a, err := audit.CreateAnchor(p.store, e.clock.Now(), p.anchoredTypes(), false)
			return a.Root, err
		},
		Forget: func(k storage.StreamKey) error {
			if m != nil {
				e.cache.Delete(cacheKey(p, m, k))
			}
			return nil
		},
		CancelScheduled: func(k storage.StreamKey) error { return e.cancelSchedulesOf(t, p, k) },
		Purge:           func(k storage.StreamKey) error { return e.purgeCopies(p, k) },
	}
	ts, err := tombstone.Execute(env, id, x.Force)
	return ts, tombstoneProblem(err)
}

// refsComplete returns tombstone.Env.RefsComplete for t: the references of typ's streams in role
// are complete when every spec version deployed to t cascaded in that role for typ, since writes
// carry only the references their spec's rules read (tombstone.AppendRefPuts). A version that
// is missing or no longer loads counts as one that did not. The versions are read once, at the
// first question.
func (e *Engine) refsComplete(t Target) func(role, typ string) (bool, error) {
	var versions []*spec.Spec
	loaded := false
	return func(role, typ string) (bool, error) {
		if !loaded {
			cur, err := e.opts.Control.Spec(t.Instance, t.Environment, 0)
			if err != nil {
				return false, err
			}
			for v := 1; v <= cur.Version; v++ {
				sv, err := e.opts.Control.Spec(t.Instance, t.Environment, v)
				if err != nil && !errors.Is(err, control.ErrNotFound) {
					return false, err
				}
				var sp *spec.Spec
				if err == nil {
					if loadedSpec, report := spec.Load(sv.Document); report.OK() {
						sp = loadedSpec
					}
				}
				versions = append(versions, sp)
			}
			loaded = true
		}
		for _, sp := range versions {
			if sp == nil {
				return false, nil
			}
			actor, target := sp.Cascades(typ)
			if role == tombstone.RoleActor && !actor || role == tombstone.RoleTarget && !target {
				return false, nil
			}
		}
		return len(versions) > 0, nil
	}
}

// cancelSchedulesOf cancels the pending scheduled events that would write to an erased stream
// (step 5 of the Tombstones page's execution), and those the erased stream's events scheduled:
// their data was rendered from the erased payload, which purgeCopies then clears, so firing them
// would write it back elsewhere or write nothing meaningful. One that fires or is canceled
// meanwhile is left as it is.
func (e *Engine) cancelSchedulesOf(t Target, p *pair, k storage.StreamKey) error {
	ids, _ := p.sched.List(schedule.Pending, math.MaxInt, 0)
	for _, id := range ids {
		r, err := e.scheduleRecord(p, id)
		if err != nil {
			return err
		}
		target := r.AggregateType == k.Type && r.AggregateID == k.ID
		source := r.SourceType == k.Type && r.SourceID == k.ID
		if !target && !source {
			continue
		}
		if _, err := e.CancelScheduled(t, id); err != nil && !errors.Is(err, problem.ErrConflict) {
			return err
		}
	}
	return nil
}
