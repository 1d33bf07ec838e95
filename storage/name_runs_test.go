package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestFoldedRuns(t *testing.T) {
	for _, c := range []struct {
		his    []uint64
		lo, hi uint64
		want   int
	}{
		{nil, 0, 4, 0},
		{[]uint64{4}, 4, 8, 1},            // equal sizes fold
		{[]uint64{8}, 8, 12, 0},           // an older run larger than the new one stays
		{[]uint64{8, 12}, 12, 14, 0},      // so does a newer one
		{[]uint64{8, 12, 14}, 14, 20, 3},  // 2 <= 6, then 4 <= 8, then 8 <= 12: a cascade
		{[]uint64{100, 110}, 110, 125, 1}, // 10 <= 15, but 100 > 25
		{[]uint64{100, 110}, 110, 111, 0}, // 10 > 1
		{[]uint64{100, 150}, 150, 200, 2}, // 50 <= 50, then 100 <= 100
	} {
		if got := foldedRuns(c.his, c.lo, c.hi); got != c.want {
			t.Errorf("foldedRuns(%v, %d, %d) = %d, want %d", c.his, c.lo, c.hi, got, c.want)
		}
	}
}

// TestWriteRun merges names in runs of several sizes and checks after each merge the runs left
// (older runs larger than the new one untouched, smaller ones folded into it), that every name is
// found with its number, and that listing merges the runs in byte order.
func TestWriteRun(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "runs.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(createBuckets); err != nil {
		t.Fatal(err)
	}
	alloc := func(n int) []byte { return make([]byte, 0, n) }
	r := rand.New(rand.NewPCG(5, 6))
	all := map[StreamKey]uint64{}
	var named uint64
	for _, step := range []struct {
		size uint64
		runs []uint64
	}{
		{4, []uint64{4}},
		{4, []uint64{8}},
		{4, []uint64{8, 12}},
		{2, []uint64{8, 12, 14}},
		{6, []uint64{20}},
		{40, []uint64{60}},
		{1, []uint64{60, 61}},
		{3, []uint64{60, 64}},
	} {
		var fresh []nameEntry
		for no := named + 1; no <= named+step.size; no++ {
			k := key([]string{"order", "item"}[r.IntN(2)], fmt.Sprintf("%08x", r.Uint32()))
			fresh = append(fresh, nameEntry{k, no})
			all[k] = no
		}
		err := db.Update(func(tx *bolt.Tx) error {
			return writeRun(tx.Bucket(bucketNames), sortNames(fresh), named, named+step.size, alloc)
		})
		if err != nil {
			t.Fatal(err)
		}
		named += step.size
		db.View(func(tx *bolt.Tx) error {
			names := tx.Bucket(bucketNames)
			if got := nameRuns(names); !slices.Equal(got, step.runs) {
				t.Fatalf("after merging %d..%d: runs %v, want %v", named-step.size+1, named, got, step.runs)
			}
			for k, no := range all {
				if got := lookupName(names, streamKeyBytes(nil, k)); got != no {
					t.Fatalf("after merging up to %d: %s has number %d, want %d", named, k, got, no)
				}
			}
			if got := lookupName(names, streamKeyBytes(nil, key("order", "missing"))); got != 0 {
				t.Fatalf("a stream never named has number %d", got)
			}
			for _, typ := range []string{"order", "item"} {
				var want []string
				for k := range all {
					if k.Type == typ {
						want = append(want, k.ID)
					}
				}
				slices.Sort(want)
				if got := mergeSortedIDs(len(want), listRuns(names, typ, "", len(want), nil)...); !slices.Equal(got, want) {
					t.Fatalf("after merging up to %d: %s ids %v, want %v", named, typ, got, want)
				}
				if len(want) > 3 {
					got := mergeSortedIDs(2, listRuns(names, typ, want[1], 2, nil)...)
					if !slices.Equal(got, want[2:4]) {
						t.Fatalf("after merging up to %d: %s ids after %s: %v, want %v", named, typ, want[1], got, want[2:4])
					}
				}
			}
			return nil
		})
	}
	// A name already in a run that the merge folds is corruption, never two entries.
	err = db.Update(func(tx *bolt.Tx) error {
		var k StreamKey
		for k = range all {
			break
		}
		return writeRun(tx.Bucket(bucketNames), []nameEntry{{k, named + 1}}, named, named+100, alloc)
	})
	if !errors.Is(err, ErrBadRecord) {
		t.Fatalf("merging a name twice: %v, want ErrBadRecord", err)
	}
}

// TestFormat4IndexIsRebuilt: an index of format 4 keeps its names in the names bucket itself,
// where this version's lookups, which search runs, would not find them. Open must rebuild it.
func TestFormat4IndexIsRebuilt(t *testing.T) {
	opts := testOptions()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		mustAppend(t, s, key("order", fmt.Sprintf("o%d", i)), ev("was_placed", i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewrite the index as format 4 had it: every name directly in the names bucket.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketNames)
		var flat [][2][]byte
		for _, hi := range nameRuns(names) {
			names.Bucket(u64Key(hi)).ForEach(func(k, v []byte) error {
				flat = append(flat, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
				return nil
			})
			if err := names.DeleteBucket(u64Key(hi)); err != nil {
				return err
			}
		}
		if len(flat) == 0 {
			return errors.New("no merged name to move")
		}
		for _, kv := range flat {
			if err := names.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaFormatKey, u64Key(4))
	})

	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if n := mustLength(t, s, key("order", fmt.Sprintf("o%d", i))); n != 1 {
			t.Fatalf("o%d after the rebuild: length %d, want 1", i, n)
		}
	}
	if ids, err := s.List("order", "", 10); err != nil || len(ids) != 8 {
		t.Fatalf("list after the rebuild: %v %v", ids, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatalf("check after the rebuild: %v", err)
	}
}
