package storage

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// TestTxHeadsSameHash indexes streams whose hashes all collide, in one transaction and across
// two that share their scratch (the second reuses the first's heads, cleared): each must keep a
// head of its own, found again by its key.
func TestTxHeadsSameHash(t *testing.T) {
	db := openEmptyIndex(t)
	recent := newRecentNames()
	sameHash := func(StreamKey) uint64 { return 7 }
	streams := []StreamKey{{Type: "a", ID: "1"}, {Type: "a", ID: "2"}, {Type: "b", ID: "1"}}
	lsn := uint64(0)
	// Each record appends one event to each stream; in the first one the streams are new.
	newRecord := func(fresh bool) *record {
		lsn++
		r := &record{lsn: lsn, eff: lsn}
		for _, k := range streams {
			ev := recEvent{sid: StreamID{Ms: lsn}, typ: "was_noted", hash: [32]byte{byte(lsn)}}
			r.groups = append(r.groups, recGroup{stream: k, first: lsn, events: []recEvent{ev}, fresh: fresh, hash: 7})
		}
		return r
	}
	var sc indexScratch
	for txn, records := range [][]*record{{newRecord(true), newRecord(false)}, {newRecord(false)}} {
		var x *indexTx
		err := db.Update(func(tx *bolt.Tx) (err error) {
			if x, err = newIndexTx(tx, &sc, recent, Options{}.tuning(), sameHash); err != nil {
				return err
			}
			for _, r := range records {
				if err := x.apply(r, wal.Pos{Seg: 1, Off: uint32(r.lsn)}); err != nil {
					return err
				}
			}
			return x.finish()
		})
		if err != nil {
			t.Fatalf("transaction %d: %v", txn, err)
		}
		x.committed()
		x.release(&sc)
		if len(sc.slabs) != 1 || sc.slabs[0][:cap(sc.slabs[0])][0].key != (StreamKey{}) {
			t.Fatalf("after transaction %d the scratch keeps %d slabs of heads (want 1, cleared)", txn, len(sc.slabs))
		}
	}
	err := db.View(func(tx *bolt.Tx) error {
		x, err := newIndexTx(tx, nil, recent, Options{}.tuning(), sameHash)
		if err != nil {
			return err
		}
		numbers := map[uint64]bool{}
		for _, k := range streams {
			var h txHead
			if err := x.lookupHead(k, &h); err != nil {
				return err
			}
			if h.Length != 3 || h.no == 0 || numbers[h.no] {
				t.Errorf("%s: length %d, number %d (numbers so far %v); want length 3 and a number of its own", k, h.Length, h.no, numbers)
			}
			numbers[h.no] = true
		}
		if n := tx.Bucket(bucketHeads).Stats().KeyN; n != len(streams) {
			t.Errorf("the index holds %d heads, want %d", n, len(streams))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPlaceEventPuts checks placeEventPuts against sorting every put by stream number, index and
// the order the puts were made (what flushPending did before), over puts to streams in random
// order, mostly appends, some repeated and some to older events (as carries make), and across
// flushes of one transaction sharing its heads; the last flush's puts come in key order, as
// those to new streams do.
func TestPlaceEventPuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	heads := make([]txHead, 50)
	for i := range heads {
		heads[i].no = uint64(rng.IntN(1_000_000) + 1)
		heads[i].no = heads[i].no*64 + uint64(i) // distinct
	}
	x := &indexTx{}
	for flush, inOrder := range []bool{false, false, true} {
		if inOrder {
			slices.SortFunc(heads, func(a, b txHead) int { return cmp.Compare(a.no, b.no) })
		}
		type made struct {
			put eventPut
			seq int
		}
		var all []made
		for seq := range 2000 {
			h := &heads[rng.IntN(len(heads))]
			if inOrder {
				h = &heads[seq*len(heads)/2000]
			}
			idx := h.Length + 1
			switch {
			case !inOrder && rng.IntN(20) == 0:
				idx = uint64(rng.IntN(int(idx))) + 1 // an older event again
			case inOrder && seq%7 == 0:
				// the same event again, in order
			default:
				h.Length = idx
			}
			v := []byte{byte(seq), byte(seq >> 8)}
			x.putEvent(h, idx, v)
			all = append(all, made{eventPut{idx, v, h}, seq})
		}
		slices.SortFunc(all, func(a, b made) int {
			return cmp.Or(cmp.Compare(a.put.h.no, b.put.h.no), cmp.Compare(a.put.idx, b.put.idx), a.seq-b.seq)
		})
		got := x.placeEventPuts()
		if len(got) != len(all) {
			t.Fatalf("flush %d: %d puts placed, want %d", flush, len(got), len(all))
		}
		for i, w := range all {
			if g := got[i]; g.h != w.put.h || g.idx != w.put.idx || string(g.v) != string(w.put.v) {
				t.Fatalf("flush %d, place %d: stream %d event %d (put %x), want stream %d event %d (put %x)",
					flush, i, g.h.no, g.idx, g.v, w.put.h.no, w.put.idx, w.put.v)
			}
		}
		for i := range heads {
			if heads[i].puts != 0 {
				t.Fatalf("flush %d: stream %d left with a count of %d puts", flush, heads[i].no, heads[i].puts)
			}
		}
		x.pendingEvents, x.putHeads = x.pendingEvents[:0], x.putHeads[:0]
	}
}
