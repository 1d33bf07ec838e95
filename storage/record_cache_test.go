package storage

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// cacheModel is the record cache's rule on plain maps: per shard, first in first out under the
// shard's budget; a second put of a cached lsn keeps the first; an evicted record is gone.
type cacheModel struct {
	budget  int64
	fifo    [cacheShards][]*record
	present map[uint64]*record
	size    [cacheShards]int64
}

func (m *cacheModel) put(r *record) {
	sh := r.lsn % cacheShards
	if m.present[r.lsn] != nil || cost(r) > m.budget {
		return
	}
	m.present[r.lsn] = r
	m.fifo[sh] = append(m.fifo[sh], r)
	m.size[sh] += cost(r)
	for m.size[sh] > m.budget {
		old := m.fifo[sh][0]
		m.fifo[sh] = m.fifo[sh][1:]
		m.evict(old.lsn)
	}
}

func (m *cacheModel) evict(lsn uint64) {
	if r := m.present[lsn]; r != nil {
		m.size[lsn%cacheShards] -= cost(r)
		delete(m.present, lsn)
	}
}

// TestRecordCache puts records the way the store does (committed ones by increasing lsn, older
// ones read back from the log in any order), erases some, and compares the cache with the model.
func TestRecordCache(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	const budget = cacheShards * 20 * 1200 // about 20 records of 1,000 bytes per shard
	c := newRecordCache(budget)
	m := &cacheModel{budget: budget / cacheShards, present: map[uint64]*record{}}
	next := uint64(1)
	for op := range 50_000 {
		var l uint64
		switch x := rng.IntN(20); {
		case x < 14: // a commit
			l = next
			next++
			r := &record{lsn: l, size: 200 + rng.IntN(1500)}
			if rng.IntN(500) == 0 {
				r.size = budget // too large for any shard
			}
			c.put(r)
			m.put(r)
		case x < 19: // a read of an older record
			l = 1 + rng.Uint64N(next)
			r := &record{lsn: l, size: 200 + rng.IntN(1500)}
			c.put(r)
			m.put(r)
		default: // an erasure
			l = 1 + rng.Uint64N(next)
			c.evict([]uint64{l})
			m.evict(l)
		}
		for _, probe := range []uint64{l, 1 + rng.Uint64N(next)} {
			if got, want := c.get(probe), m.present[probe]; got != want {
				t.Fatalf("seed %d, op %d: get(%d) = %p, want %p", seed, op, probe, got, want)
			}
		}
		if sh := l % cacheShards; c.shards[sh].size != m.size[sh] {
			t.Fatalf("seed %d, op %d: shard %d counts %d bytes, want %d", seed, op, sh, c.shards[sh].size, m.size[sh])
		}
	}
	for l := uint64(1); l < next; l++ {
		if got, want := c.get(l), m.present[l]; got != want {
			t.Fatalf("seed %d: get(%d) = %p, want %p", seed, l, got, want)
		}
	}
}

// TestRecordCacheCountsItsMemory commits single events, the common record, reads them back into
// the cache and compares the heap the cache's records take, found by evicting them all, with what
// the cache counts.
func TestRecordCacheCountsItsMemory(t *testing.T) {
	const n = 20_000
	opts := testOptions()
	opts.CacheBytes = 1 << 30
	s, _ := openChecked(t, opts)
	k := key("item", "a")
	for i := range n {
		mustAppend(t, s, k, ev("was_noted", map[string]any{"note": "a note of some length", "n": i}))
	}
	flushCommitted(t, s)
	if got := len(allEvents(t, s, k)); got != n {
		t.Fatalf("read back %d events, want %d", got, n)
	}
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	counted := cachedBytes(s)
	before := heap()
	lsns := make([]uint64, 0, n)
	for l := range uint64(n) {
		lsns = append(lsns, l+1)
	}
	s.cache.evict(lsns)
	held := before - heap()
	if ratio := float64(held) / float64(counted); ratio < 0.9 || ratio > 1.1 {
		t.Errorf("the cache holds %d bytes of %d records and counts %d (ratio %.2f)", held, n, counted, ratio)
	}
}

// TestReadsFillTheRecordCache: commits leave the cache alone (the collector would mark whatever
// it holds in each cycle, records nobody reads included); a replay fills it.
func TestReadsFillTheRecordCache(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("item", "a")
	for i := range 100 {
		mustAppend(t, s, k, ev("was_noted", map[string]any{"n": i}))
	}
	flushCommitted(t, s)
	if n := cachedBytes(s); n != 0 {
		t.Fatalf("after the commits the cache counts %d bytes, want 0", n)
	}
	allEvents(t, s, k)
	if n := cachedBytes(s); n == 0 {
		t.Fatal("after a replay the cache is empty")
	}
}

// cachedBytes is what s's record cache counts for the records it holds.
func cachedBytes(s *Store) (n int64) {
	for i := range s.cache.shards {
		n += s.cache.shards[i].size
	}
	return n
}
