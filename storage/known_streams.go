package storage

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// knownStreams is a Bloom filter of the streams that have a head: the keys of the index's heads,
// read in the background after Open (scanKnownStreams), and every stream a commit starts since.
// A stream it has never seen has no head anywhere, so the commit path can take a new stream's
// head to be empty without searching the index; for writes to fresh aggregates that search was
// most of the time the commit lock was held.
//
// It answers "no" only with certainty, and "maybe" for every key until the scan is done. No false
// "no" follows from two facts: a stream's head reaches the index only through a commit (the
// commits before Open are in the index when the scan starts, the later ones are added as they
// are written), and the scan sees every key the index had when it started.
//
// Stages of doubling capacity hold the streams as they grow, without ever rebuilding: a key goes
// to the newest stage, a lookup checks them all, so the false-positive rates of the stages add
// up. Each stage is a split-block filter: a key sets one bit in each of the eight words of one
// 64-byte block (one cache line, one memory access per stage), 16 bits per key, which makes a
// full stage about 0.1% false positives; the filter as a whole stays under 1% up to about 100
// million streams (BenchmarkKnownStreams). The layout before, one 64-bit word per key with 5
// bits set and 12 bits of filter per key, was near 1% per stage: 4% at a million streams and 7%
// at 9 million, each false positive a search of the index with the commit lock held. Memory: 2
// bytes per stream, up to twice that while the newest stage fills (32 MB at 10 million streams).
// With 64 connections writing to fresh aggregates over HTTP, the first filter took the server
// from ~29,800 to ~32,100 writes/s (40 to 36 µs of processor per write).
type knownStreams struct {
	seed   maphash.Seed
	ready  atomic.Bool
	mu     sync.Mutex
	stages []bloomStage // protected by mu
	added  int          // protected by mu; keys added to the newest stage
	// touched keeps what touch read, so that the compiler cannot drop the reads. Protected by mu.
	touched uint64
}

// bloomBlock is one cache line of a stage. Go allocates a stage (128 KiB and up) on page
// boundaries, so no block straddles two lines.
type bloomBlock [8]uint64

type bloomStage struct {
	blocks   []bloomBlock
	capacity int
}

const (
	knownFirstCapacity = 1 << 16
	knownBitsPerKey    = 16
)

// bloomSalts spread a key's hash over the words of its block: word j gets the bit given by the
// top six bits of the low half of the hash times salt j (odd constants from the split-block
// Bloom filter of Apache Parquet).
var bloomSalts = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

func newKnownStreams() *knownStreams {
	return &knownStreams{seed: maphash.MakeSeed()}
}

// hashKey hashes a stream key as the index spells it (type 0 id; see hashIndexKey).
func (f *knownStreams) hashKey(k StreamKey) uint64 {
	var buf [128]byte
	return f.hashIndexKey(streamKeyBytes(buf[:0], k))
}

// hashIndexKey hashes a stream key as the index spells it (type 0 id), so that keys read from the
// index and keys of commits hash alike.
func (f *knownStreams) hashIndexKey(b []byte) uint64 { return maphash.Bytes(f.seed, b) }

// blockMask is the bit a key sets in each word of its block, from the hash's low half.
func blockMask(h uint64) bloomBlock {
	var m bloomBlock
	for j, salt := range bloomSalts {
		m[j] = 1 << (uint32(h) * salt >> 26)
	}
	return m
}

// blockIndex picks the block of a stage with n blocks, from the hash's high half.
func blockIndex(h uint64, n int) int { return int(uint64(uint32(h>>32)) * uint64(n) >> 32) }

func (f *knownStreams) addHashes(hs ...uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range hs {
		f.addLocked(h)
	}
}

// addLocked adds a hashed key to the newest stage, starting a new one when it is full.
// REQUIRES: f.mu held.
func (f *knownStreams) addLocked(h uint64) {
	if len(f.stages) == 0 || f.added >= f.stages[len(f.stages)-1].capacity {
		c := knownFirstCapacity
		if len(f.stages) > 0 {
			c = 2 * f.stages[len(f.stages)-1].capacity
		}
		f.stages = append(f.stages, bloomStage{blocks: make([]bloomBlock, c*knownBitsPerKey/512), capacity: c})
		f.added = 0
	}
	st := &f.stages[len(f.stages)-1]
	b, m := &st.blocks[blockIndex(h, len(st.blocks))], blockMask(h)
	for j := range b {
		b[j] |= m[j]
	}
	f.added++
}

// touch reads the first word of each group's block in every stage, so that the look-ups of a
// record's streams under the commit lock find their blocks in the processor's caches. A look-up of
// a new stream reads a block in every stage, and one after the other those reads each wait for
// memory (a stage per doubling: five at two million streams); these do not depend on one another,
// so the processor waits for them together. For a record of one stream there is nothing to
// overlap.
func (f *knownStreams) touch(groups []recGroup) {
	if len(groups) < 2 || !f.ready.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var sum uint64
	for i := range groups {
		h := groups[i].hash
		for _, st := range f.stages {
			sum += st.blocks[blockIndex(h, len(st.blocks))][0]
		}
	}
	f.touched += sum
}

// mayHave reports whether the stream whose key hashes to h (hashKey) may have a head; false is
// certain.
func (f *knownStreams) mayHave(h uint64) bool {
	if !f.ready.Load() {
		return true
	}
	return f.mayHaveHash(h)
}

// mayHaveHash is mayHave of a hashed key, for a filter whose scan is done.
func (f *knownStreams) mayHaveHash(h uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := blockMask(h)
	for _, st := range f.stages {
		if b := &st.blocks[blockIndex(h, len(st.blocks))]; b[0]&m[0] != 0 && b[1]&m[1] != 0 && b[2]&m[2] != 0 &&
			b[3]&m[3] != 0 && b[4]&m[4] != 0 && b[5]&m[5] != 0 && b[6]&m[6] != 0 && b[7]&m[7] != 0 {
			return true
		}
	}
	return false
}
