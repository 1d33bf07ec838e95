package storage

import (
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
			if x, err = newIndexTx(tx, &sc, recent, namesMergeMin, sameHash); err != nil {
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
		x, err := newIndexTx(tx, nil, recent, namesMergeMin, sameHash)
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
