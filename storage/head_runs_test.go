package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestHeadRuns: the heads of the streams one transaction numbers go into runs of at most
// headRunBytes, with no key of their own; a stream's later head gets a key that reads, the walk
// over all heads and a reopened store take over its entry in the run. Check (at cleanup) compares
// the index with a rebuild, which applies every record in one transaction and so has every head
// in a run and none of its own.
func TestHeadRuns(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	const n = 100
	streams := make([]StreamKey, n)
	rec := &Record{}
	for i := range streams {
		streams[i] = key("stock", fmt.Sprintf("item-%03d-%s", i, strings.Repeat("x", 40)))
		rec.Appends = append(rec.Appends, Append{Stream: streams[i], Events: []NewEvent{ev("was_added", map[string]any{"i": i})}})
	}
	if _, err := s.Commit(rec); err != nil {
		t.Fatal(err)
	}
	flushCommitted(t, s)
	keysOf := func(name []byte) (keys int) {
		t.Helper()
		err := s.view(func(tx *bolt.Tx) error {
			return tx.Bucket(name).ForEach(func(_, v []byte) error {
				if string(name) == string(bucketHeadRuns) && len(v) > headRunBytes {
					t.Errorf("a run of heads of %d bytes, above %d", len(v), headRunBytes)
				}
				keys++
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if runs, own := keysOf(bucketHeadRuns), keysOf(bucketHeads); runs < 3 || own != 0 {
		t.Fatalf("%d new streams of one record: %d runs of heads and %d heads of their own, want 3 or more and 0", n, runs, own)
	}

	updated := map[StreamKey]bool{}
	for _, i := range []int{0, 1, 37, 50, n - 1} {
		mustAppend(t, s, streams[i], ev("was_counted", nil))
		updated[streams[i]] = true
	}
	flushCommitted(t, s)
	if own := keysOf(bucketHeads); own != len(updated) {
		t.Fatalf("after %d streams changed: %d heads of their own, want %d", len(updated), own, len(updated))
	}
	lengths := func(s *Store) {
		t.Helper()
		for _, k := range streams {
			want := uint64(1)
			if updated[k] {
				want = 2
			}
			if got := mustLength(t, s, k); got != want {
				t.Errorf("%s: length %d, want %d", k, got, want)
			}
		}
		var walked []uint64
		err := s.view(func(tx *bolt.Tx) error {
			return forEachHead(tx, 1, func(no uint64, v []byte) error {
				var h head
				if err := h.unmarshal(u64Key(no), v); err != nil {
					return err
				}
				k, err := parseStreamKey(headKey(v))
				if err != nil {
					return err
				}
				if updated[k] != (h.Length == 2) {
					t.Errorf("walk: %s has length %d", k, h.Length)
				}
				walked = append(walked, no)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(walked) != n || walked[0] != 1 || walked[n-1] != n {
			t.Errorf("the walk over the heads gave numbers %v, want 1..%d", walked, n)
		}
	}
	lengths(s)
	if got := allEvents(t, s, streams[37]); len(got) != 2 || got[1].Type != "was_counted" {
		t.Errorf("events of %s: %v", streams[37], got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, opts); err != nil {
		t.Fatal(err)
	} else {
		lengths(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A head of its own that no run holds is an index the log would not give.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketHeads).Cursor().Last()
		return tx.Bucket(bucketHeads).Put(binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(k)+1), append([]byte(nil), v...))
	})
	if err := Check(dir, opts); !errors.Is(err, ErrIndexMismatch) || !errors.Is(err, ErrBadIndex) {
		t.Fatalf("check of a head that no run holds: got %v, want ErrIndexMismatch and ErrBadIndex", err)
	}
	// Leave the index as the log gives it for the check at cleanup.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketHeads).Cursor().Last()
		return tx.Bucket(bucketHeads).Delete(append([]byte(nil), k...))
	})
}

// TestHeadRunsRefuseAGap: a run places each head by its first number and its place, so heads
// whose numbers leave a gap must not be written as one.
func TestHeadRunsRefuseAGap(t *testing.T) {
	db := openEmptyIndex(t)
	hs := []*txHead{{key: key("stock", "a")}, {key: key("stock", "b")}}
	hs[0].no, hs[1].no = 1, 3
	err := db.Update(func(tx *bolt.Tx) error {
		return putHeadRuns(tx.Bucket(bucketHeadRuns), hs, func(n int) []byte { return make([]byte, 0, n) })
	})
	if err == nil {
		t.Fatal("heads numbered 1 and 3 were written as one run")
	}
}
