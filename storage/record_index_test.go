package storage

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// TestRecordIndexModel changes the records bucket through the indexer's blocks and through the
// single-record calls, in random transactions, and compares every read with a plain map.
func TestRecordIndexModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	db := openEmptyIndex(t)
	model := map[uint64]wal.Pos{}
	next := uint64(1)
	posOf := func() wal.Pos { return wal.Pos{Seg: 1 + rng.Uint32N(9), Off: rng.Uint32()} }
	for txn := range 300 {
		err := db.Update(func(tx *bolt.Tx) error {
			x, err := newIndexTx(tx, nil, nil, Options{}.tuning(), newKnownStreams().hashKey)
			if err != nil {
				return err
			}
			// The indexer: consecutive lsns, sometimes skipping some (records not in the log).
			for range rng.IntN(3 * recordsPerBlock) {
				next += uint64(1 + rng.IntN(2)*rng.IntN(100))
				p := posOf()
				if err := x.records.set(next, p); err != nil {
					return err
				}
				model[next] = p
				probe := rng.Uint64N(next + 2)
				if has, err := x.records.has(probe); err != nil || has != (model[probe] != wal.Pos{}) {
					t.Fatalf("seed %d, txn %d: has(%d) = %v, %v", seed, txn, probe, has, err)
				}
			}
			if err := x.records.flush(); err != nil {
				return err
			}
			// Compaction and erasure: moves and removals of earlier records.
			ri := recordsOf(tx)
			for range rng.IntN(20) {
				l := rng.Uint64N(next + 1)
				if rng.IntN(2) == 0 {
					if err := ri.remove(l); err != nil {
						return err
					}
					delete(model, l)
				} else if _, ok := model[l]; ok {
					p := posOf()
					if err := ri.put(l, p); err != nil {
						return err
					}
					model[l] = p
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []uint64
	for l := range model {
		want = append(want, l)
	}
	slices.Sort(want)
	err := db.View(func(tx *bolt.Tx) error {
		ri := recordsOf(tx)
		for l := uint64(0); l <= next+recordsPerBlock; l++ {
			got, ok, err := ri.get(l)
			if wantPos, wantOK := model[l]; got != wantPos || ok != wantOK || err != nil {
				t.Fatalf("seed %d: get(%d) = %v, %v, %v; want %v, %v", seed, l, got, ok, err, wantPos, wantOK)
			}
		}
		for range 200 {
			from := rng.Uint64N(next + 2)
			to := from + rng.Uint64N(4*recordsPerBlock)
			limit := 1 + rng.IntN(50)
			var got []uint64
			if err := ri.each(from, to, func(l uint64) bool {
				got = append(got, l)
				return len(got) < limit
			}); err != nil {
				t.Fatalf("seed %d: each(%d, %d): %v", seed, from, to, err)
			}
			var exp []uint64
			for _, l := range want {
				if l >= from && l <= to && len(exp) < limit {
					exp = append(exp, l)
				}
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("seed %d: each(%d, %d) stopping at %d = %v, want %v", seed, from, to, limit, got, exp)
			}
		}
		// A block without records is deleted, not kept as zeros.
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			if !slices.ContainsFunc(want, func(l uint64) bool { return string(recordBlockKey(l)) == string(k) }) {
				t.Errorf("seed %d: block %x is kept without records", seed, k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The indexer keeps a transaction's buffers for the next one, cleared, unless a burst made them
// too large to hold on to.
func TestIndexScratchKeepsOnlyModestBuffers(t *testing.T) {
	small := make([]kv, 3, 8)
	small[0] = kv{k: []byte("k"), v: []byte("v")}
	if got := reusable(small); len(got) != 0 || cap(got) != 8 || got[:1][0].k != nil {
		t.Fatalf("small buffer: len %d cap %d, first %+v; want it kept, empty and cleared", len(got), cap(got), got[:1][0])
	}
	if got := reusable(make([]kv, 0, scratchKeep+1)); got != nil {
		t.Fatalf("a buffer past scratchKeep was kept (cap %d)", cap(got))
	}
}
