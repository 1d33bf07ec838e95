package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCheckAcceptsAnIndexBehindTheLog: after a crash the index lags the log until the next Open
// catches it up. Check must judge the index as Open would leave it, without changing it, and
// still catch an index that disagrees with the log.
func TestCheckAcceptsAnIndexBehindTheLog(t *testing.T) {
	opts := testOptions()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string) {
		t.Helper()
		if _, err := s.Commit(&Record{Appends: []Append{{Stream: key("order", id), Events: []NewEvent{ev("was_placed", map[string]any{"id": id})}}}}); err != nil {
			t.Fatal(err)
		}
	}
	commit("a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.db")
	behind, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	commit("b")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The index as a crash before the indexer's next batch would leave it.
	if err := os.WriteFile(index, behind, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatalf("check of an index behind the log: %v", err)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(behind) {
		t.Fatal("check changed index.db")
	}

	// An index that disagrees with the log is still reported.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		// The first stream's length, in the first run of heads (head_runs.go).
		k, v := tx.Bucket(bucketHeadRuns).Cursor().First()
		if k == nil {
			return errors.New("no stream head to tamper with")
		}
		tampered := append([]byte(nil), v...)
		tampered[4+4*binary.BigEndian.Uint32(v)] ^= 0xff
		return tx.Bucket(bucketHeadRuns).Put(append([]byte(nil), k...), tampered)
	})
	if err := Check(dir, opts); !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("check of a tampered index: got %v, want ErrIndexMismatch", err)
	}
}

// TestCheckFindsMisplacedNames: a name in a run that does not cover its number, or in two runs,
// is an index the log would not give, and so is a chunk of names that lookups would misread;
// Check says so. Each run here is a single chunk.
func TestCheckFindsMisplacedNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(older, newer *bolt.Bucket) error
	}{
		{"moved to an older run", func(older, newer *bolt.Bucket) error {
			k, v := newer.Cursor().First()
			k, v = append([]byte(nil), k...), append([]byte(nil), v...)
			if err := newer.Delete(k); err != nil {
				return err
			}
			return older.Put(k, v)
		}},
		{"copied to a newer run", func(older, newer *bolt.Bucket) error {
			k, v := older.Cursor().First()
			return newer.Put(append([]byte(nil), k...), append([]byte(nil), v...))
		}},
		{"chunk keyed by a name it does not begin with", func(older, newer *bolt.Bucket) error {
			k, v := newer.Cursor().First()
			k, v = append([]byte(nil), k...), append([]byte(nil), v...)
			if err := newer.Delete(k); err != nil {
				return err
			}
			return newer.Put(append(k, 0), v)
		}},
		{"chunk cut short", func(older, newer *bolt.Bucket) error {
			k, v := older.Cursor().First()
			return older.Put(append([]byte(nil), k...), append([]byte(nil), v[:len(v)-3]...))
		}},
		{"names out of order", func(older, newer *bolt.Bucket) error {
			var keys [][]byte
			var nos []uint64
			err := forRunNames(older, func(k []byte, no uint64) {
				keys, nos = append(keys, append([]byte(nil), k...)), append(nos, no)
			})
			if err != nil {
				return err
			}
			k, _ := older.Cursor().First()
			if err := older.Delete(append([]byte(nil), k...)); err != nil {
				return err
			}
			// The last two swapped: the first name still matches a rebuild's.
			n := len(keys)
			keys[n-2], keys[n-1], nos[n-2], nos[n-1] = keys[n-1], keys[n-2], nos[n-1], nos[n-2]
			w := chunkWriter{run: older, alloc: func(n int) []byte { return make([]byte, 0, n) }}
			for i := range keys {
				if err := w.add(keys[i], nos[i]); err != nil {
					return err
				}
			}
			return w.flush()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			dir := t.TempDir()
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			// Three names at a time make runs of 3, folded into 6, then a run of 3 beside it.
			for i := range 9 {
				mustAppend(t, s, key("order", string(rune('a'+i*7%9))), ev("was_placed", i))
				if i%3 == 2 {
					indexAll(t, s)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Check(dir, opts); err != nil {
				t.Fatalf("check before tampering: %v", err)
			}
			updateIndex(t, dir, func(tx *bolt.Tx) error {
				names := tx.Bucket(bucketNames)
				runs := nameRuns(names)
				if len(runs) != 2 {
					return fmt.Errorf("runs %v, want two", runs)
				}
				return c.tamper(names.Bucket(u64Key(runs[0])), names.Bucket(u64Key(runs[1])))
			})
			if err := Check(dir, opts); !errors.Is(err, ErrIndexMismatch) {
				t.Fatalf("check of a tampered index: got %v, want ErrIndexMismatch", err)
			}
		})
	}
}
