package storage

import (
	"cmp"
	"slices"
	"sync"
)

// recentNames holds, in memory, the names of the streams that the names bucket does not have yet:
// every stream numbered above the watermark's named count. Their heads are in the index (in runs
// of heads, head_runs.go), and a head holds its stream's key, so the set is derived: Open reads
// it back from the heads numbered above the named count.
//
// The indexer adds a transaction's new streams after the transaction commits and before it drops
// their overlay generation, and empties the set after a transaction that merged it into the names
// bucket. A reader looks a stream up in the overlay first, here second and in bbolt last (in a
// transaction begun after the look-up here), so it never misses a stream: a stream that left the
// overlay is here, and one that left this set is in the names bucket of every later transaction.
//
// A merge writes every recent name in one transaction, in key order, as a new run of the names
// bucket (name_runs.go), once there are as many as a quarter of the names already merged (within
// namesMergeMin and namesMergeMax): pages are then written full of new names, where a put per new
// stream rewrote a page per stream. With writes to fresh aggregates from 64 connections and
// 500,000 streams already written, putting the heads by key cost the indexer about a third of its
// time.
type recentNames struct {
	mu  sync.RWMutex
	nos map[StreamKey]uint64 // protected by mu
	// sorted holds keys of nos in key order and unsorted the ones added since; a listing sorts
	// them together when it needs them. Protected by mu.
	sorted, unsorted []StreamKey
}

// nameEntry is a stream key and the stream's number.
type nameEntry struct {
	key StreamKey
	no  uint64
}

// Bounds of the number of recent names that starts a merge. The upper bound caps the memory the
// set takes (about 130 bytes a name) and a merge's transaction; the lower one keeps a small
// store from merging a few names at a time.
const (
	namesMergeMin = 1 << 16
	namesMergeMax = 1 << 18
)

func newRecentNames() *recentNames {
	return &recentNames{nos: make(map[StreamKey]uint64)}
}

// get returns the number of a recent stream, 0 if the stream is not recent.
func (r *recentNames) get(k StreamKey) uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.nos[k]
}

func (r *recentNames) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.nos)
}

// add records streams a committed transaction numbered.
func (r *recentNames) add(es []nameEntry) {
	if len(es) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		if _, ok := r.nos[e.key]; !ok {
			r.unsorted = append(r.unsorted, e.key)
		}
		r.nos[e.key] = e.no
	}
}

// clear forgets every name, once a committed transaction merged them. The map and the list of
// unsorted keys keep their room for the names that gather until the next merge.
func (r *recentNames) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.nos)
	clear(r.unsorted)
	r.sorted, r.unsorted = nil, r.unsorted[:0]
}

// entries appends every recent name to dst.
func (r *recentNames) entries(dst []nameEntry) []nameEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for k, no := range r.nos {
		dst = append(dst, nameEntry{k, no})
	}
	return dst
}

func compareKeys(a, b StreamKey) int {
	if c := cmp.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// list returns up to limit ids of recent streams of type typ after cursor, in byte order (the
// order of the names bucket: comparing types, then ids, orders keys as type 0 id does).
func (r *recentNames) list(typ, cursor string, limit int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unsorted) > 0 {
		slices.SortFunc(r.unsorted, compareKeys)
		merged := make([]StreamKey, 0, len(r.sorted)+len(r.unsorted))
		i, j := 0, 0
		for i < len(r.sorted) || j < len(r.unsorted) {
			if j == len(r.unsorted) || i < len(r.sorted) && compareKeys(r.sorted[i], r.unsorted[j]) < 0 {
				merged = append(merged, r.sorted[i])
				i++
			} else {
				merged = append(merged, r.unsorted[j])
				j++
			}
		}
		r.sorted, r.unsorted = merged, nil
	}
	from, _ := slices.BinarySearchFunc(r.sorted, StreamKey{Type: typ, ID: cursor}, compareKeys)
	var out []string
	for _, k := range r.sorted[from:] {
		if k.Type != typ || len(out) == limit {
			break
		}
		if k.ID > cursor {
			out = append(out, k.ID)
		}
	}
	return out
}

// mergeDue says whether n recent names make a merge, named names having been merged before;
// least is the lower bound (namesMergeMin outside tests).
func mergeDue(n int, named uint64, least int) bool {
	return n >= max(least, min(int(named/4), namesMergeMax))
}
