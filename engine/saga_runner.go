package engine

import (
	"sort"
	"sync"
	"time"

	"github.com/j17-go/j17/engine/saga"
)

// DefaultSagaPoll is how often the saga runner looks for work when nothing wakes it: the Sagas
// page's 1000 ms.
const DefaultSagaPoll = time.Second

// sagaSpace is the record space holding each saga's state under its id.
const sagaSpace = "saga"

// sagaSet is the saga work of one pair: the running sagas and the index of those waiting.
type sagaSet struct {
	// run serializes every action on the pair's sagas: the runner's and a retry's.
	run sync.Mutex

	mu sync.Mutex
	// running holds the sagas whose status is running; protected by mu.
	running map[string]*saga.State
	// reserved counts the places held for sagas that commits in progress start or resume; with
	// running it stays within MaxRunningSagas. Protected by mu.
	reserved int
	// pending lists awaited aggregates that received events since the last pass; recheck asks
	// the next pass to look at every waiting saga (after recovery). Protected by mu.
	pending []saga.Key
	recheck bool

	index saga.Index
}

// sagaRunner is the goroutine that advances sagas: steps that are ready, awaited events that
// arrived, timeouts. It wakes on every commit that may concern a saga and every poll interval.
type sagaRunner struct {
	e    *Engine
	poll time.Duration
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// startSagaRunner sets e.sagas and starts its goroutine, which reads it.
func (e *Engine) startSagaRunner(poll time.Duration) {
	if poll <= 0 {
		poll = DefaultSagaPoll
	}
	e.sagas = &sagaRunner{e: e, poll: poll, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go e.sagas.loop()
}

// signal asks the runner for a pass soon.
func (r *sagaRunner) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// halt stops the runner and waits for its pass to end.
func (r *sagaRunner) halt() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}

func (r *sagaRunner) loop() {
	defer close(r.done)
	r.e.openExisting()
	t := time.NewTicker(r.poll)
	defer t.Stop()
	for {
		r.e.sagaPass()
		select {
		case <-r.stop:
			return
		case <-r.wake:
		case <-t.C:
		}
	}
}

// loadSagas reads the running sagas of a pair being opened and indexes those waiting; the first
// pass then looks at every waiting saga, since events may have arrived before a crash.
func loadSagas(p *pair) (*sagaSet, error) {
	set := &sagaSet{running: map[string]*saga.State{}, recheck: true}
	err := p.store.Scan(sagaSpace, "", func(_ string, v []byte) error {
		st, err := saga.Decode(v)
		if err != nil {
			return err
		}
		if st.Status == saga.Running {
			set.running[st.ID] = st
			if w := st.Waiting(); w != nil {
				set.index.Add(saga.Key{Type: w.AwaitType, ID: w.AwaitID}, st.ID)
			}
		}
		return nil
	})
	return set, err
}

// sagaPass advances the sagas of every open pair.
func (e *Engine) sagaPass() {
	pairs := e.openPairs()
	for _, p := range pairs {
		select {
		case <-e.sagas.stop:
			return
		default:
		}
		e.driveSagas(p)
	}
}

// driveSagas advances every running saga of p as far as it can go now.
func (e *Engine) driveSagas(p *pair) {
	set := p.sagas
	set.run.Lock()
	defer set.run.Unlock()
	m := p.model.Load()
	if m == nil {
		return
	}
	set.mu.Lock()
	keys, recheck := set.pending, set.recheck
	set.pending, set.recheck = nil, false
	ids := make([]string, 0, len(set.running))
	for id := range set.running {
		ids = append(ids, id)
	}
	set.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	sort.Strings(ids)
	check := map[string]bool{}
	for _, k := range keys {
		for _, id := range set.index.Lookup(k) {
			check[id] = true
		}
	}
	for _, id := range ids {
		e.driveSaga(p, m, set, id, recheck || check[id])
	}
}

// get returns the running saga id, or nil.
func (s *sagaSet) get(id string) *saga.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id]
}

// reserve takes a running place for a saga about to start or resume, when running and reserved
// sagas leave one within MaxRunningSagas. The place is the saga's once admit publishes it, and
// is given back with unreserve if its commit fails.
func (s *sagaSet) reserve() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running)+s.reserved >= MaxRunningSagas {
		return false
	}
	s.reserved++
	return true
}

// unreserve gives back n places taken by reserve.
func (s *sagaSet) unreserve(n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved -= n
}

// admit is publish for a saga whose running place was reserved: the place becomes its own in
// the same step, so no count sees the saga twice or not at all.
func (s *sagaSet) admit(before, after *saga.State) {
	s.publishWith(before, after, 1)
}

// publish makes after, now durable, the state of its saga, moving it in the await index.
func (s *sagaSet) publish(before, after *saga.State) {
	s.publishWith(before, after, 0)
}

func (s *sagaSet) publishWith(before, after *saga.State, reserved int) {
	if before != nil {
		if w := before.Waiting(); w != nil {
			s.index.Remove(saga.Key{Type: w.AwaitType, ID: w.AwaitID}, before.ID)
		}
	}
	if w := after.Waiting(); w != nil {
		s.index.Add(saga.Key{Type: w.AwaitType, ID: w.AwaitID}, after.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved -= reserved
	if after.Status == saga.Running {
		s.running[after.ID] = after
	} else {
		delete(s.running, after.ID)
	}
}

// notify records that events were committed to keys and wakes the runner if a saga waits on one.
func (e *Engine) notifySagas(s *sagaSet, keys []saga.Key) {
	var hit []saga.Key
	for _, k := range keys {
		if s.index.Has(k) {
			hit = append(hit, k)
		}
	}
	if len(hit) == 0 {
		return
	}
	s.mu.Lock()
	s.pending = append(s.pending, hit...)
	s.mu.Unlock()
	e.sagas.signal()
}
