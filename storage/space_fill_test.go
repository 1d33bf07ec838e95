package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestSpaceFill commits records of new streams whose references are ordered puts, as writes to
// new aggregates do, and records of puts to unrelated keys: the references leave the space
// bucket's pages nearly full, the unrelated keys leave them as bbolt's default does.
func TestSpaceFill(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ordered bool
		min     float64 // least fraction of the leaf pages' bytes in use
		max     float64
	}{
		// At bbolt's default of half, appended keys leave pages 47% used.
		{name: "ordered puts of new streams", ordered: true, min: 0.85, max: 1},
		// At a fill of 100%, random keys leave pages 30% used; at the default, two thirds.
		{name: "puts of random keys", ordered: false, min: 0.55, max: 0.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openChecked(t, testOptions())
			r := rand.New(rand.NewPCG(1, 2))
			const records, perRecord = 400, 50
			for i := range records {
				rec := &Record{}
				for j := range perRecord {
					if tc.ordered {
						// A record's streams start in the same millisecond, in no order of
						// their ids; the key orders them by first timestamp, then id.
						k := key("inventory", fmt.Sprintf("%016x", r.Uint64()))
						e := ev("e", i*perRecord+j)
						e.Timestamp = 1705312800000 + int64(i)
						rec.Appends = append(rec.Appends, Append{Stream: k, Events: []NewEvent{e}})
						rec.Puts = append(rec.Puts, Put{Space: "refs", Key: "actor\x00user\x00a1\x00inventory\x00", Stream: k, Value: []byte{}})
					} else {
						rec.Puts = append(rec.Puts, Put{Space: "refs", Key: fmt.Sprintf("idem\x00%032x", r.Uint64()), Value: []byte{}})
					}
				}
				if _, err := s.Commit(rec); err != nil {
					t.Fatal(err)
				}
				if i%100 == 99 { // a few index transactions, as under a steady load
					if err := s.flush(s.visible.Load()); err != nil {
						t.Fatal(err)
					}
				}
			}
			var st bolt.BucketStats
			if err := s.db.View(func(tx *bolt.Tx) error {
				st = tx.Bucket(bucketSpace).Stats()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if st.KeyN != records*perRecord {
				t.Fatalf("space bucket holds %d keys, want %d", st.KeyN, records*perRecord)
			}
			if used := float64(st.LeafInuse) / float64(st.LeafAlloc); used < tc.min || used > tc.max {
				t.Errorf("leaf pages %.2f used (%d pages), want %.2f to %.2f", used, st.LeafPageN, tc.min, tc.max)
			}
		})
	}
}

func TestSpaceFillChoice(t *testing.T) {
	for _, tc := range []struct {
		puts, ordered int
		want          float64
	}{
		{0, 0, bolt.DefaultFillPercent},
		{100, 100, 1},
		{100, 90, 1},
		{100, 89, bolt.DefaultFillPercent},
		{100, 0, bolt.DefaultFillPercent},
	} {
		if got := spaceFill(tc.puts, tc.ordered); got != tc.want {
			t.Errorf("spaceFill(%d puts, %d ordered) = %v, want %v", tc.puts, tc.ordered, got, tc.want)
		}
	}
}
