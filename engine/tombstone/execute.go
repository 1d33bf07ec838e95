package tombstone

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
)

// Step names a point of an execution at which a Hook runs.
type Step string

// The points of an execution, in order. StepRewritten and StepRecorded come once per stream.
const (
	// StepStarted follows the put that made the tombstone executing with its plan.
	StepStarted Step = "started"
	// StepRewritten follows the rewrite of one stream, before its progress is recorded.
	StepRewritten Step = "rewritten"
	// StepRecorded follows the put that records one stream as done.
	StepRecorded Step = "recorded"
	// StepFinishing precedes the put that completes the tombstone.
	StepFinishing Step = "finishing"
)

// Env is what an execution needs from its engine.
type Env struct {
	Store storage.EventStore
	// Spec gives the onTombstone rules; nil discovers nothing beyond the tombstoned stream.
	Spec *spec.Spec
	Now  time.Time
	// RefsComplete reports whether every stream of typ has its references in role: whether
	// every spec version deployed to the environment cascaded in that role for typ, so that
	// every write to it carried them (AppendRefPuts). Discover reads the streams of a type for
	// which it does not; nil reads them for every type.
	RefsComplete func(role, typ string) (bool, error)
	// Root returns the root over every stream root of the store: the pre_tombstone_root.
	Root func() (string, error)
	// Forget clears every cached or saved state of a rewritten stream.
	Forget func(storage.StreamKey) error
	// CancelScheduled cancels the pending scheduled events that target a rewritten stream or
	// that its events scheduled; nil cancels nothing.
	CancelScheduled func(storage.StreamKey) error
	// Purge erases every copy of a rewritten stream's payload kept outside its events
	// (checkpoint states, scheduled-event data, saga triggers and results), returning only when
	// no byte of them remains in any file (storage.Store.Erase); nil erases nothing more.
	Purge func(storage.StreamKey) error
	// Hook, when set, runs at each Step; an error stops the execution there, as a crash would,
	// leaving the tombstone executing. It exists for crash tests.
	Hook func(Step) error
	Log  *slog.Logger
}

func (env *Env) hook(s Step) error {
	if env.Hook == nil {
		return nil
	}
	if err := env.Hook(s); err != nil {
		return fmt.Errorf("tombstone: stopped at step %s: %w", s, err)
	}
	return nil
}

// Execute runs a tombstone's execution, or finishes one that was interrupted. A pending
// tombstone runs only after its grace period or with force; a completed one is returned as it
// is.
func Execute(env Env, id string, force bool) (Tombstone, error) {
	t, err := Get(env.Store, id)
	if err != nil {
		return Tombstone{}, err
	}
	switch t.Status {
	case StatusCompleted:
		return t, nil
	case StatusCancelled:
		return Tombstone{}, fmt.Errorf("%w: tombstone %s was cancelled", ErrState, id)
	case StatusPending:
		if err := start(&env, &t, force); err != nil {
			return Tombstone{}, err
		}
	}
	if err := finish(&env, &t); err != nil {
		return Tombstone{}, err
	}
	return t, nil
}

// start records the pre-tombstone root, the streams to rewrite and the start time in one put.
func start(env *Env, t *Tombstone, force bool) error {
	if env.Now.Before(t.ExecutableAt) {
		if !force {
			return fmt.Errorf("%w: tombstone %s can be executed from %s, or now with force=true", ErrGracePeriod, t.ID, t.ExecutableAt.Format(time.RFC3339))
		}
		env.Log.Warn("tombstone executed before its grace period ended (force)", "tombstone_id", t.ID, "key", t.Key, "executable_at", t.ExecutableAt)
		t.Forced = true
	}
	root, err := env.Root()
	if err != nil {
		return fmt.Errorf("tombstone: pre-tombstone root: %w", err)
	}
	more, err := Discover(env.Store, env.Spec, t.Stream(), env.RefsComplete)
	if err != nil {
		return fmt.Errorf("tombstone: discovery: %w", err)
	}
	plan := []string{t.Key}
	for _, k := range more {
		plan = append(plan, k.String())
	}
	at := env.Now.UTC().Truncate(time.Second)
	t.Status, t.StartedAt, t.PreTombstoneRoot, t.Plan = StatusExecuting, &at, root, plan
	if err := put(env.Store, t); err != nil {
		return err
	}
	env.Log.Info("tombstone executing", "tombstone_id", t.ID, "key", t.Key, "streams", len(plan))
	return env.hook(StepStarted)
}

// finish rewrites every planned stream not yet recorded as done, then completes the tombstone.
func finish(env *Env, t *Tombstone) error {
	done := map[string]bool{}
	for _, a := range t.Done {
		done[a.Key] = true
	}
	for _, key := range t.Plan {
		if done[key] {
			continue
		}
		k, err := parseKey(key, t)
		if err != nil {
			return err
		}
		n, err := erase(env, k, t.ID, *t.StartedAt)
		if err != nil {
			return fmt.Errorf("tombstone: rewrite %s: %w", key, err)
		}
		if err := env.hook(StepRewritten); err != nil {
			return err
		}
		t.Done = append(t.Done, Affected{Key: key, EventCount: n, Action: ActionTombstoned})
		if err := put(env.Store, t); err != nil {
			return err
		}
		if err := env.hook(StepRecorded); err != nil {
			return err
		}
	}
	if err := env.hook(StepFinishing); err != nil {
		return err
	}
	at := env.Now.UTC().Truncate(time.Second)
	t.Status, t.ExecutedAt, t.AffectedStreams = StatusCompleted, &at, t.Done
	if err := put(env.Store, t); err != nil {
		return err
	}
	env.Log.Info("tombstone completed", "tombstone_id", t.ID, "key", t.Key, "streams", len(t.Done))
	return nil
}

// erase rewrites one stream into markers and clears what is derived from it. A stream that holds
// only markers already (a rewrite finished before a crash) is not rewritten again.
func erase(env *Env, k storage.StreamKey, id string, at time.Time) (uint64, error) {
	n, err := env.Store.Length(k)
	if err != nil || n == 0 {
		return 0, err
	}
	erased := true
	err = env.Store.Range(k, 1, n, func(ev storage.Event) error {
		if ev.Type != MarkerType {
			erased = false
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	if !erased {
		res, err := env.Store.Rewrite(k, func(ev storage.Event) (storage.NewEvent, error) { return Replace(ev, id, at) })
		if err != nil {
			return 0, err
		}
		n = res.Length
	}
	if err := env.Store.DropSnapshot(k); err != nil {
		return 0, err
	}
	if env.Forget != nil {
		if err := env.Forget(k); err != nil {
			return 0, err
		}
	}
	if env.CancelScheduled != nil {
		if err := env.CancelScheduled(k); err != nil {
			return 0, err
		}
	}
	if env.Purge != nil {
		if err := env.Purge(k); err != nil {
			return 0, err
		}
	}
	return n, nil
}

var errStop = errors.New("stop")

func parseKey(key string, t *Tombstone) (storage.StreamKey, error) {
	typ, id, ok := strings.Cut(key, ":")
	if !ok || typ == "" || id == "" {
		return storage.StreamKey{}, fmt.Errorf("tombstone: record %s plans a malformed stream key %q", t.ID, key)
	}
	return storage.StreamKey{Type: typ, ID: id}, nil
}
