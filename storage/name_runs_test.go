package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
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
// found with its number and no other name is, and that listing merges the runs in byte order.
// The larger runs span many chunks, and some names are longer than a chunk.
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
		{500, []uint64{564}},
		{300, []uint64{564, 864}},
		{300, []uint64{1164}},
	} {
		var fresh []nameEntry
		for no := named + 1; no <= named+step.size; no++ {
			id := fmt.Sprintf("%08x", r.Uint32())
			if r.IntN(50) == 0 {
				id += strings.Repeat("x", chunkMax+r.IntN(100))
			}
			k := key([]string{"order", "item"}[r.IntN(2)], id)
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
				// Names just above and below k fall inside k's chunk or between two chunks.
				for _, near := range []StreamKey{key(k.Type, k.ID+"\x00"), key(k.Type, k.ID[:len(k.ID)-1])} {
					if _, ok := all[near]; !ok {
						if got := lookupName(names, streamKeyBytes(nil, near)); got != 0 {
							t.Fatalf("after merging up to %d: %q, never named, has number %d", named, near, got)
						}
					}
				}
			}
			for _, missing := range []StreamKey{key("", ""), key("item", ""), key("order", "missing"), key("zzz", "")} {
				if got := lookupName(names, streamKeyBytes(nil, missing)); got != 0 {
					t.Fatalf("%q, never named, has number %d", missing, got)
				}
			}
			for _, typ := range []string{"order", "item"} {
				var want []string
				for k := range all {
					if k.Type == typ {
						want = append(want, k.ID)
					}
				}
				slices.Sort(want)
				if got := listNames(names, typ, "", len(want), nil); !slices.Equal(got, want) {
					t.Fatalf("after merging up to %d: %s ids %v, want %v", named, typ, got, want)
				}
				// Names in memory (the overlay's, the recent ones) merge in, some of them in a run too
				// and some in both lists, as while the indexer moves a stream along.
				var inRuns, fresh []string
				for i, id := range want {
					if i%3 == 0 {
						inRuns = append(inRuns, id)
					}
					if i%7 == 0 {
						fresh = append(fresh, id+"~")
					}
				}
				union := slices.Concat(want, fresh)
				slices.Sort(union)
				if got := listNames(names, typ, "", len(union), [][]string{inRuns, fresh, fresh[:len(fresh)/2]}); !slices.Equal(got, union) {
					t.Fatalf("after merging up to %d: %s ids with names in memory %v, want %v", named, typ, got, union)
				}
				for i := 1; i+3 < len(want); i += 1 + len(want)/20 {
					got := listNames(names, typ, want[i], 2, nil)
					if !slices.Equal(got, want[i+1:i+3]) {
						t.Fatalf("after merging up to %d: %s ids after %s: %v, want %v", named, typ, want[i], got, want[i+1:i+3])
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
		return writeRun(tx.Bucket(bucketNames), []nameKey{{streamKeyBytes(nil, k), named + 1}}, named, 2*named, alloc)
	})
	if !errors.Is(err, ErrBadIndex) {
		t.Fatalf("merging a name twice: %v, want ErrBadIndex", err)
	}
}

// forRunNames calls fn with each name of run and its stream number, in key order.
func forRunNames(run *bolt.Bucket, fn func(key []byte, no uint64)) error {
	rc := newRunCursor(run)
	k, no, err := rc.first()
	for ; k != nil && err == nil; k, no, err = rc.next() {
		fn(k, no)
	}
	return err
}

// TestFormat5IndexIsRebuilt: an index of format 5 keeps a key per name in its runs, where this
// version's lookups, which read chunks, would not find them. Open must rebuild it.
func TestFormat5IndexIsRebuilt(t *testing.T) {
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
	// Rewrite the runs as format 5 had them: a key per name, the stream number its value.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketNames)
		his := nameRuns(names)
		if len(his) == 0 {
			return errors.New("no merged name to rewrite")
		}
		for _, hi := range his {
			var flat [][2][]byte
			err := forRunNames(names.Bucket(u64Key(hi)), func(k []byte, no uint64) {
				flat = append(flat, [2][]byte{append([]byte(nil), k...), u64Key(no)})
			})
			if err != nil {
				return err
			}
			if err := names.DeleteBucket(u64Key(hi)); err != nil {
				return err
			}
			run, err := names.CreateBucket(u64Key(hi))
			if err != nil {
				return err
			}
			for _, kv := range flat {
				if err := run.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(metaFormatKey, u64Key(5))
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

// TestDamagedChunksAreErrors: a names chunk cut short or with any byte changed reads as names or
// as an error, never a panic, whether parsed alone or searched and walked in a run.
func TestDamagedChunksAreErrors(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chunks.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.NoSync = true
	alloc := func(n int) []byte { return make([]byte, 0, n) }
	w := chunkWriter{alloc: alloc}
	for i := range 6 {
		if err := w.add(streamKeyBytes(nil, key("order", fmt.Sprintf("o%d", i))), uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	chunk := appendChunk(nil, w.offs, w.body)
	// A name whose length is near the largest a uvarint holds.
	huge := appendChunk(nil, []uint16{0}, append(binary.AppendUvarint(nil, math.MaxUint64-3), "order\x00o0........"...))
	damaged := [][]byte{huge}
	for n := range len(chunk) {
		damaged = append(damaged, chunk[:n])
	}
	for i := range chunk {
		for _, b := range []byte{0x00, 0x7f, 0xff} {
			d := slices.Clone(chunk)
			d[i] = b
			damaged = append(damaged, d)
		}
	}
	first := streamKeyBytes(nil, key("order", "o0"))
	for _, d := range damaged {
		if c, err := parseChunk(d); err == nil {
			for i := range c.n {
				c.at(i)
			}
			c.lowerBound(streamKeyBytes(nil, key("order", "o3")))
		}
		err := db.Update(func(tx *bolt.Tx) error {
			names := tx.Bucket(bucketNames)
			if names != nil {
				if err := tx.DeleteBucket(bucketNames); err != nil {
					return err
				}
			}
			names, err := tx.CreateBucket(bucketNames)
			if err != nil {
				return err
			}
			run, err := names.CreateBucket(u64Key(6))
			if err != nil {
				return err
			}
			return run.Put(first, d)
		})
		if err != nil {
			t.Fatal(err)
		}
		db.View(func(tx *bolt.Tx) error {
			names := tx.Bucket(bucketNames)
			for i := range 7 {
				lookupName(names, streamKeyBytes(nil, key("order", fmt.Sprintf("o%d", i))))
			}
			listNames(names, "order", "o2", 10, nil)
			rc := newRunCursor(names.Bucket(u64Key(6)))
			for k, _, err := rc.first(); k != nil && err == nil; k, _, err = rc.next() {
			}
			return nil
		})
	}
}
