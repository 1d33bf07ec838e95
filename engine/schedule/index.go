package schedule

import (
	"container/heap"
	"slices"
	"strings"
	"sync"

	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/storage"
)

// Limits of the Scheduled Events page.
const (
	MaxPerAggregate = 100
	MaxPerPair      = 100_000
)

// entry is what the index keeps of a schedule; the rest stays in the store.
type entry struct {
	id     string
	fireAt int64
	status string
	source storage.StreamKey
	cancel []implication.Match
	// slot is the entry's position in the due heap, -1 when it is not there.
	slot int
}

// Index is the in-memory view of one pair's schedules.
type Index struct {
	mu struct {
		sync.Mutex
		// All fields below are protected by mu.
		byID map[string]*entry
		// ids holds every id in byte order, which for time-ordered ids is creation order.
		ids    []string
		sorted bool
		due    dueHeap
		// cancel maps a watched event to the pending schedules it cancels.
		cancel map[implication.Match][]*entry
		// perSource counts pending schedules per scheduling aggregate.
		perSource map[storage.StreamKey]int
		pending   int
		// held and heldTotal count the room reserved by commits in progress, per source and
		// in all.
		held      map[storage.StreamKey]int
		heldTotal int
	}
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	x := &Index{}
	x.mu.byID = map[string]*entry{}
	x.mu.cancel = map[implication.Match][]*entry{}
	x.mu.perSource = map[storage.StreamKey]int{}
	x.mu.held = map[storage.StreamKey]int{}
	x.mu.sorted = true
	return x
}

// Load rebuilds the index of a store from its record space.
func Load(st storage.EventStore) (*Index, error) {
	x := NewIndex()
	done := map[string]string{}
	for _, p := range []struct{ prefix, status string }{{prefixCanceled, Canceled}, {prefixFired, Fired}} {
		err := st.Scan(Space, p.prefix, func(key string, _ []byte) error {
			done[strings.TrimPrefix(key, p.prefix)] = p.status
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err := st.Scan(Space, prefixRecord, func(_ string, value []byte) error {
		r, err := DecodeRecord(value)
		if err != nil {
			return err
		}
		status := done[r.ID]
		switch {
		case status != "":
		case r.Dead:
			status = DeadLetter
		default:
			status = Pending
		}
		x.mu.Lock()
		x.addLocked(r, status)
		x.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Add indexes a committed schedule.
func (x *Index) Add(r *Record) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.addLocked(r, Pending)
}

// REQUIRES: mu held.
func (x *Index) addLocked(r *Record, status string) {
	e := &entry{id: r.ID, fireAt: r.FireAt, status: status, source: storage.StreamKey{Type: r.SourceType, ID: r.SourceID}, cancel: r.CancelOn, slot: -1}
	if n := len(x.mu.ids); n > 0 && x.mu.ids[n-1] > r.ID {
		x.mu.sorted = false
	}
	x.mu.byID[r.ID] = e
	x.mu.ids = append(x.mu.ids, r.ID)
	if status == Pending {
		x.pendLocked(e)
	}
}

// pendLocked makes e pending: in the heap, the cancel table and the counts.
// REQUIRES: mu held.
func (x *Index) pendLocked(e *entry) {
	e.status = Pending
	heap.Push(&x.mu.due, e)
	for _, m := range e.cancel {
		x.mu.cancel[m] = append(x.mu.cancel[m], e)
	}
	x.mu.perSource[e.source]++
	x.mu.pending++
}

// settleLocked takes e out of the pending structures and gives it status.
// REQUIRES: mu held.
func (x *Index) settleLocked(e *entry, status string) {
	if e.status == Pending {
		if e.slot >= 0 {
			heap.Remove(&x.mu.due, e.slot)
		}
		for _, m := range e.cancel {
			list := slices.DeleteFunc(x.mu.cancel[m], func(o *entry) bool { return o == e })
			if len(list) == 0 {
				delete(x.mu.cancel, m)
			} else {
				x.mu.cancel[m] = list
			}
		}
		if x.mu.perSource[e.source]--; x.mu.perSource[e.source] == 0 {
			delete(x.mu.perSource, e.source)
		}
		x.mu.pending--
	}
	e.status = status
}

// Reserve takes room for adds[k] more pending schedules from each source k, within
// MaxPerAggregate per source and MaxPerPair in all, counting both the pending schedules and the
// room other writes hold. A write reserves before its commit and gives the room back with
// Reservation.Commit or Release: two writes racing for the last place cannot both get it. When
// there is no room it takes nothing and returns a *LimitError.
func (x *Index) Reserve(adds map[storage.StreamKey]int) (*Reservation, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	total := 0
	for k, n := range adds {
		if x.mu.perSource[k]+x.mu.held[k]+n > MaxPerAggregate {
			return nil, &LimitError{Source: k}
		}
		total += n
	}
	if x.mu.pending+x.mu.heldTotal+total > MaxPerPair {
		return nil, &LimitError{PerPair: true}
	}
	r := &Reservation{x: x, adds: make(map[storage.StreamKey]int, len(adds)), total: total}
	for k, n := range adds {
		r.adds[k] = n
		x.mu.held[k] += n
	}
	x.mu.heldTotal += total
	return r, nil
}

// Reservation is room held for schedules that a commit in progress adds.
type Reservation struct {
	x     *Index
	adds  map[storage.StreamKey]int
	total int
}

// Commit indexes the committed schedules the room was held for and gives the room back, in one
// step, so that no count sees them twice or not at all. r is spent afterwards.
func (r *Reservation) Commit(recs []*Record) {
	if r == nil || r.x == nil {
		return
	}
	x := r.x
	x.mu.Lock()
	defer x.mu.Unlock()
	r.releaseLocked()
	for _, rec := range recs {
		x.addLocked(rec, Pending)
	}
}

// Release gives the room back: the commit failed or never happened. Releasing a spent or nil
// reservation does nothing.
func (r *Reservation) Release() {
	if r == nil || r.x == nil {
		return
	}
	r.x.mu.Lock()
	defer r.x.mu.Unlock()
	r.releaseLocked()
}

// REQUIRES: r.x.mu held.
func (r *Reservation) releaseLocked() {
	x := r.x
	for k, n := range r.adds {
		if x.mu.held[k] -= n; x.mu.held[k] <= 0 {
			delete(x.mu.held, k)
		}
	}
	x.mu.heldTotal -= r.total
	r.x = nil
}

// Canceled returns the pending schedules that an event of type eventType on k cancels.
func (x *Index) Canceled(k storage.StreamKey, eventType string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	list := x.mu.cancel[implication.Match{AggregateType: k.Type, ID: k.ID, EventType: eventType}]
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.id
	}
	return ids
}

// HasCancels reports whether any pending schedule watches for events; a write with nothing to
// watch skips looking up its events.
func (x *Index) HasCancels() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.mu.cancel) > 0
}

// Settle records that id was fired or canceled.
func (x *Index) Settle(id, status string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.mu.byID[id]; e != nil && e.status != Fired {
		x.settleLocked(e, status)
	}
}

// Bury moves a pending id to dead_letter.
func (x *Index) Bury(id string) {
	x.Settle(id, DeadLetter)
}

// Revive makes a dead-lettered id pending again, due at once.
func (x *Index) Revive(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.mu.byID[id]; e != nil && e.status == DeadLetter {
		x.pendLocked(e)
	}
}

// Status returns the status of id, or "" when it is unknown.
func (x *Index) Status(id string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.mu.byID[id]; e != nil {
		return e.status
	}
	return ""
}

// Due returns the pending ids whose fire time is at or before nowMs, earliest first, taking
// them off the heap: a caller that fails to fire one gives it back with Retry.
func (x *Index) Due(nowMs int64) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ids []string
	for len(x.mu.due) > 0 && x.mu.due[0].fireAt <= nowMs {
		e := heap.Pop(&x.mu.due).(*entry)
		ids = append(ids, e.id)
	}
	return ids
}

// Retry puts a pending id that failed to fire back on the heap.
func (x *Index) Retry(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.mu.byID[id]; e != nil && e.status == Pending && e.slot < 0 {
		heap.Push(&x.mu.due, e)
	}
}

// Pending is the number of pending schedules.
func (x *Index) Pending() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.mu.pending
}

// List returns the ids with status (all when status is ""), in creation order, after skipping
// offset of them and up to limit, and how many match in all.
func (x *Index) List(status string, limit, offset int) ([]string, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.mu.sorted {
		slices.Sort(x.mu.ids)
		x.mu.sorted = true
	}
	var out []string
	total := 0
	for _, id := range x.mu.ids {
		if status != "" && x.mu.byID[id].status != status {
			continue
		}
		if total >= offset && len(out) < limit {
			out = append(out, id)
		}
		total++
	}
	return out, total
}

// dueHeap orders pending entries by fire time.
type dueHeap []*entry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].fireAt < h[j].fireAt }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}
func (h *dueHeap) Push(v any) {
	e := v.(*entry)
	e.slot = len(*h)
	*h = append(*h, e)
}
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.slot = -1
	return e
}
