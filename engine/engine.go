package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/j17-go/j17/engine/cache"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/idempotency"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/storage"
)

// DefaultCacheBytes is the aggregate cache budget when Options.CacheBytes is 0.
const DefaultCacheBytes = 256 << 20

// Options configure an Engine.
type Options struct {
	// DataDir holds one directory per instance, each with one per environment; required.
	DataDir string
	// Control is the control store the deployed specs are read from; required.
	Control *control.Store
	// Clock stamps events and idempotency markers; nil is the wall clock.
	Clock control.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// CacheBytes bounds the aggregate cache; 0 means DefaultCacheBytes, negative turns it off.
	CacheBytes int64
	// SnapshotEvery is the snapshot interval in events; 0 means snapshot.DefaultEvery.
	SnapshotEvery uint64
	// NoSync skips fsync in the stores: for tests and benchmarks only.
	NoSync bool
	// AfterCommit, when set, runs after every successful write commit and before its answer is
	// built. It exists for crash tests, which kill the process there.
	AfterCommit func()
	// Implications bounds implication chains; zero fields take implication.DefaultLimits.
	Implications implication.Limits
	// SchedulerPoll is how often due scheduled events are looked for; 0 means
	// DefaultSchedulerPoll, negative runs no scheduler (RunDue still fires).
	SchedulerPoll time.Duration
	// SagaPoll is how often the saga runner looks for due work; 0 means DefaultSagaPoll.
	SagaPoll time.Duration
	// IdempotencyTTL is how long an idempotency key is replayed after its last use; 0 means
	// idempotency.TTL, the documented 24 hours.
	IdempotencyTTL time.Duration
	// IdempotencySweep is how often markers older than IdempotencyTTL are deleted from storage;
	// 0 means DefaultIdempotencySweep, negative runs no sweep (expired keys are still never
	// replayed).
	IdempotencySweep time.Duration
}

// Target names one (instance, environment).
type Target struct {
	Instance    string // the instance uuid
	Environment string
}

// Engine is the data plane.
type Engine struct {
	opts   Options
	clock  control.Clock
	log    *slog.Logger
	cache  *cache.Cache
	policy snapshot.Policy
	// mu guards pairs and closed. Every request looks its pair up: it takes mu for reading, so
	// that concurrent requests do not queue on one another.
	mu     sync.RWMutex
	pairs  map[Target]*pair
	closed bool
	// seq numbers pairs and models, so that cache keys never collide across either.
	seq atomic.Uint64
	// limits bound implications; sched is the scheduler goroutine, nil when turned off.
	limits implication.Limits
	sched  *background
	// sagas advances the sagas of every open pair until Close.
	sagas *sagaRunner
	// idem deletes expired idempotency markers; nil when turned off.
	idem *background
	// openedExisting guards the one walk of the data directory at start (openExisting).
	openedExisting sync.Once
}

// pair is one open (instance, environment).
type pair struct {
	target Target
	// prefix starts every cache key of the pair.
	prefix string
	store  storage.EventStore
	model  atomic.Pointer[model]
	locks  idempotency.Locks
	// sched indexes the pair's scheduled events; fireMu serializes firing and operator changes.
	sched  *schedule.Index
	fireMu sync.Mutex
	sagas  *sagaSet
}

// New returns an Engine; stores open at first use.
func New(opts Options) (*Engine, error) {
	if opts.DataDir == "" || opts.Control == nil {
		return nil, errors.New("engine: Options.DataDir and Options.Control are required")
	}
	if opts.Clock == nil {
		opts.Clock = control.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	budget := opts.CacheBytes
	if budget == 0 {
		budget = DefaultCacheBytes
	}
	e := &Engine{
		opts: opts, clock: opts.Clock, log: opts.Logger, cache: cache.New(budget),
		policy: snapshot.Policy{Every: opts.SnapshotEvery}, pairs: map[Target]*pair{},
		limits: implicationLimits(opts.Implications),
	}
	e.startScheduler()
	e.startSagaRunner(opts.SagaPoll)
	e.startIdempotencySweep()
	return e, nil
}

// open returns the pair of t, opening its store and loading its spec on first use.
func (e *Engine) open(t Target) (*pair, error) {
	e.mu.RLock()
	p, closed := e.pairs[t], e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return nil, ErrClosed
	case p != nil:
		return p, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if p := e.pairs[t]; p != nil {
		return p, nil
	}
	if !control.ValidEnvironment(t.Environment) || t.Instance == "" || filepath.Base(t.Instance) != t.Instance {
		return nil, fmt.Errorf("engine: invalid target %q/%q", t.Instance, t.Environment)
	}
	dir := filepath.Join(e.opts.DataDir, t.Instance, t.Environment)
	st, err := storage.Open(dir, storage.Options{
		NoSync: e.opts.NoSync, Logger: e.log.With("instance", t.Instance, "environment", t.Environment),
		Clock: func() time.Time { return e.clock.Now() },
	})
	if err != nil {
		return nil, fmt.Errorf("engine: open %s/%s: %w", t.Instance, t.Environment, err)
	}
	idx, err := schedule.Load(st)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("engine: scheduled events of %s/%s: %w", t.Instance, t.Environment, err)
	}
	p = &pair{target: t, store: st, prefix: fmt.Sprintf("%d/", e.seq.Add(1)), sched: idx}
	m, err := e.loadModel(t)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	if m != nil {
		p.model.Store(m)
	}
	if p.sagas, err = loadSagas(p); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("engine: sagas of %s/%s: %w", t.Instance, t.Environment, err)
	}
	e.pairs[t] = p
	return p, nil
}

// openPairs returns the pairs open now, for the background goroutines that visit each.
func (e *Engine) openPairs() []*pair {
	e.mu.RLock()
	defer e.mu.RUnlock()
	pairs := make([]*pair, 0, len(e.pairs))
	for _, p := range e.pairs {
		pairs = append(pairs, p)
	}
	return pairs
}

// Close closes every store. Requests must have stopped.
func (e *Engine) Close() error {
	e.stopIdempotencySweep()
	e.stopScheduler()
	e.sagas.halt()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, p := range e.pairs {
		if err := p.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s/%s: %w", p.target.Instance, p.target.Environment, err))
		}
	}
	e.pairs = nil
	return errors.Join(errs...)
}
