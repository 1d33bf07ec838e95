package storage

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strings"
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
//
// The set is kept free of pointers, so that the collector does not trace it. Up to namesMergeMax
// names gather between merges. As a map keyed by StreamKey (two strings each, which also kept the
// strings of every new stream alive) the set was about a quarter of the live heap under orders to
// new streams, all of it for the collector to trace; and its look-ups and insertions, hashing
// both strings of a key into a table of tens of megabytes, took 2.4% of the server's processor.
type recentNames struct {
	mu sync.RWMutex
	// hash hashes a stream key for first; a field so that tests can make keys collide.
	hash func(StreamKey) uint64
	// first maps a key's hash to 1 + the index in names of the last name added with that hash;
	// names of equal hashes are chained through recentName.next. Protected by mu.
	first map[uint64]uint32
	names []recentName // protected by mu
	// keys holds each name's type and id, back to back, where its recentName says. Protected by mu.
	keys []byte
	// sorted holds indexes in names in key order and unsorted the ones added since; a listing
	// sorts them together when it needs them. Protected by mu.
	sorted, unsorted []uint32
}

// recentName is a stream's number and where its key is in recentNames.keys.
type recentName struct {
	no            uint64
	at            int
	typLen, idLen uint32
	next          uint32 // 1 + the index of the name added before it with the same hash, or 0
}

// nameEntry is a stream key and the stream's number.
type nameEntry struct {
	key StreamKey
	no  uint64
}

// Bounds of the number of recent names that starts a merge. The upper bound caps the memory the
// set takes (100 to 140 bytes a name with a 36-byte id, as its slices grow) and a merge's
// transaction; the lower one keeps a small store from merging a few names at a time.
const (
	namesMergeMin = 1 << 16
	namesMergeMax = 1 << 18
)

func newRecentNames() *recentNames {
	seed := maphash.MakeSeed()
	return &recentNames{
		hash:  func(k StreamKey) uint64 { return maphash.Comparable(seed, k) },
		first: make(map[uint64]uint32),
	}
}

func (r *recentNames) typeOf(n *recentName) []byte { return r.keys[n.at : n.at+int(n.typLen)] }

func (r *recentNames) idOf(n *recentName) []byte {
	at := n.at + int(n.typLen)
	return r.keys[at : at+int(n.idLen)]
}

// find returns the index in names of k, whose hash is h, or -1. REQUIRES: r.mu held.
func (r *recentNames) find(k StreamKey, h uint64) int { return r.findFrom(r.first[h], k) }

// findFrom is find along the chain that starts at first (a value of r.first). REQUIRES: r.mu held.
func (r *recentNames) findFrom(first uint32, k StreamKey) int {
	for i := first; i != 0; i = r.names[i-1].next {
		n := &r.names[i-1]
		if string(r.typeOf(n)) == k.Type && string(r.idOf(n)) == k.ID {
			return int(i - 1)
		}
	}
	return -1
}

// get returns the number of a recent stream, 0 if the stream is not recent.
func (r *recentNames) get(k StreamKey) uint64 {
	h := r.hash(k)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if i := r.find(k, h); i >= 0 {
		return r.names[i].no
	}
	return 0
}

func (r *recentNames) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.names)
}

// add records streams a committed transaction numbered.
func (r *recentNames) add(es []nameEntry) {
	if len(es) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		h := r.hash(e.key)
		// One look-up of the table serves both the search and the chaining: the table is tens
		// of megabytes, and each look-up is likely a cache miss.
		first := r.first[h]
		if i := r.findFrom(first, e.key); i >= 0 {
			r.names[i].no = e.no
			continue
		}
		r.names = append(r.names, recentName{
			no: e.no, at: len(r.keys), next: first,
			typLen: uint32(len(e.key.Type)), idLen: uint32(len(e.key.ID)),
		})
		r.keys = append(append(r.keys, e.key.Type...), e.key.ID...)
		r.first[h] = uint32(len(r.names))
		r.unsorted = append(r.unsorted, uint32(len(r.names)-1))
	}
}

// clear forgets every name, once a committed transaction merged them. The table, the names and
// their keys keep their room for the names that gather until the next merge.
func (r *recentNames) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.first)
	r.names, r.keys = r.names[:0], r.keys[:0]
	r.sorted, r.unsorted = nil, r.unsorted[:0]
}

// entries appends every recent name to dst. Their strings share one copy of the keys.
func (r *recentNames) entries(dst []nameEntry) []nameEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	keys := string(r.keys)
	for i := range r.names {
		n := &r.names[i]
		typEnd := n.at + int(n.typLen)
		k := StreamKey{Type: keys[n.at:typEnd], ID: keys[typEnd : typEnd+int(n.idLen)]}
		dst = append(dst, nameEntry{k, n.no})
	}
	return dst
}

// compare orders names i and j as the names bucket does (type, then id, as bytes).
func (r *recentNames) compare(i, j uint32) int {
	a, b := &r.names[i], &r.names[j]
	if c := bytes.Compare(r.typeOf(a), r.typeOf(b)); c != 0 {
		return c
	}
	return bytes.Compare(r.idOf(a), r.idOf(b))
}

// list returns up to limit ids of recent streams of type typ after cursor, in byte order (the
// order of the names bucket: comparing types, then ids, orders keys as type 0 id does).
func (r *recentNames) list(typ, cursor string, limit int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unsorted) > 0 {
		slices.SortFunc(r.unsorted, r.compare)
		merged := make([]uint32, 0, len(r.sorted)+len(r.unsorted))
		i, j := 0, 0
		for i < len(r.sorted) || j < len(r.unsorted) {
			if j == len(r.unsorted) || i < len(r.sorted) && r.compare(r.sorted[i], r.unsorted[j]) < 0 {
				merged = append(merged, r.sorted[i])
				i++
			} else {
				merged = append(merged, r.unsorted[j])
				j++
			}
		}
		r.sorted, r.unsorted = merged, r.unsorted[:0]
	}
	from, _ := slices.BinarySearchFunc(r.sorted, StreamKey{Type: typ, ID: cursor},
		func(i uint32, k StreamKey) int {
			n := &r.names[i]
			if c := strings.Compare(string(r.typeOf(n)), k.Type); c != 0 {
				return c
			}
			return strings.Compare(string(r.idOf(n)), k.ID)
		})
	var out []string
	for _, i := range r.sorted[from:] {
		n := &r.names[i]
		if string(r.typeOf(n)) != typ || len(out) == limit {
			break
		}
		if id := r.idOf(n); string(id) > cursor {
			out = append(out, string(id))
		}
	}
	return out
}

// mergeDue says whether n recent names make a merge, named names having been merged before;
// least is the lower bound (namesMergeMin outside tests).
func mergeDue(n int, named uint64, least int) bool {
	return n >= max(least, min(int(named/4), namesMergeMax))
}
