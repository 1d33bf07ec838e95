package storage

import (
	"sync"
	"unsafe"
)

// recordCache keeps decoded records by lsn, so that replaying a stream whose records were read
// recently costs no system call and no decoding. A record's content never changes for its lsn
// (compaction moves records but keeps their bytes), so entries never go stale; records dropped by
// an erasure are evicted so that no erased payload stays in memory either. Eviction is first in,
// first out under a byte budget, per shard; shards keep concurrent readers off one lock. A record
// larger than a shard's budget (1/16 of the whole) is not cached. A replay reads a stream's
// records by increasing lsn, so a shard keeps them in a window (a sliding slice; lsns far from
// its end go to its map).
//
// Only reads fill the cache, not commits. The garbage collector marks everything the cache holds
// in each of its cycles: filled by every commit, the cache held 64 MiB of records nobody read
// under a write load, and the collector's cycles over them were the server's slowest moments.
// In alternated runs of bench/cmd/loadgen (three pairs, each scenario in turn on one server),
// commits that stopped filling it took the open-loop p99 of single writes at 16 connections from
// 12, 28 and 21 ms to 4.7, 6.1 and 9.6 ms; of cached reads of an aggregate of 100 events, run
// after the write scenarios, from 23, 13 and 22 ms to 2.1, 2.3 and 3.5 ms; of the mixed load
// (nine reads per write) from 25, 26 and 39 ms to 5.4, 7.3 and 19 ms; and of orders over the
// catalog from 45, 39 and 19 ms to 26, 28 and 25 ms. The first read of a stream after a write
// reads the new record from the log, which is in the kernel's page cache.
type recordCache struct {
	off    bool
	shards [cacheShards]cacheShard
}

const cacheShards = 16

type cacheShard struct {
	mu     sync.Mutex
	budget int64
	size   int64           // protected by mu
	items  window[*record] // protected by mu; by lsn/cacheShards
	fifo   []uint64        // protected by mu; insertion order, may hold evicted lsns
}

func newRecordCache(budget int64) *recordCache {
	if budget == 0 {
		budget = defaultCacheBytes
	}
	c := &recordCache{off: budget < 0}
	for i := range c.shards {
		c.shards[i].budget = budget / cacheShards
	}
	return c
}

func (c *recordCache) shard(lsn uint64) *cacheShard { return &c.shards[lsn%cacheShards] }

// cost is what a cached record keeps in memory: its payload (its events' data and metadata slice
// it), its structs and strings, and the cache's two slots for it. Counting the payload and a flat
// 256 bytes undercounted the structs of a record of one event: a cache of 64 MiB filled with
// records of single-event writes held 108 MB.
func cost(r *record) int64 {
	n := int64(r.size) + recordBytes + 2*8 + 8*int64(cap(r.superseded)) +
		int64(cap(r.groups))*groupBytes + int64(cap(r.puts))*putBytes + 16*int64(cap(r.spaceKeys)) +
		int64(cap(r.deletes))*deleteBytes
	for _, g := range r.groups {
		n += int64(len(g.stream.Type)+len(g.stream.ID)) + int64(len(g.events))*eventBytes
		for _, e := range g.events {
			n += int64(len(e.typ))
		}
	}
	for _, p := range r.puts {
		n += int64(len(p.Key) + len(p.Value))
	}
	for _, d := range r.deletes {
		n += int64(len(d.Key))
	}
	return n
}

var (
	recordBytes = int64(unsafe.Sizeof(record{}))
	groupBytes  = int64(unsafe.Sizeof(recGroup{}))
	eventBytes  = int64(unsafe.Sizeof(recEvent{}))
	putBytes    = int64(unsafe.Sizeof(Put{}))
	deleteBytes = int64(unsafe.Sizeof(Delete{}))
)

func (c *recordCache) get(lsn uint64) *record {
	if c.off {
		return nil
	}
	sh := c.shard(lsn)
	sh.mu.Lock()
	r, _ := sh.items.get(lsn / cacheShards)
	sh.mu.Unlock()
	return r
}

func (c *recordCache) put(r *record) {
	if c.off {
		return
	}
	sh := c.shard(r.lsn)
	n := cost(r)
	if n > sh.budget {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.items.get(r.lsn / cacheShards); ok {
		return
	}
	// Kept for the eviction, which would otherwise walk a record long out of the processor's
	// caches.
	r.cost = n
	sh.items.set(r.lsn/cacheShards, r)
	sh.fifo = append(sh.fifo, r.lsn)
	sh.size += n
	for sh.size > sh.budget && len(sh.fifo) > 0 {
		old := sh.fifo[0]
		sh.fifo = sh.fifo[1:]
		sh.removeLocked(old)
	}
	if cap(sh.fifo) > 4*len(sh.fifo)+1024 {
		sh.fifo = append([]uint64(nil), sh.fifo...)
	}
}

func (c *recordCache) evict(lsns []uint64) {
	for _, l := range lsns {
		sh := c.shard(l)
		sh.mu.Lock()
		sh.removeLocked(l)
		sh.mu.Unlock()
	}
}

// removeLocked drops record lsn if the shard holds it. REQUIRES: sh.mu held.
func (sh *cacheShard) removeLocked(lsn uint64) {
	if o, ok := sh.items.get(lsn / cacheShards); ok {
		sh.size -= o.cost
		sh.items.remove(lsn / cacheShards)
	}
}
