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

// TestUndecodableIndex: index.db is derived from the log, so bytes of it that do not decode are
// a difference from the log, which a rebuild mends. Check reports them as ErrIndexMismatch, not
// as an undecodable log record, which would send an operator after the log; Open rebuilds an
// index that it cannot load, and a read that meets such bytes later fails with ErrBadIndex.
func TestUndecodableIndex(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(tx *bolt.Tx) error
		// loaded: Open reads the damaged bytes, so it rebuilds the index.
		loaded bool
	}{
		{"head without a stream key", func(tx *bolt.Tx) error {
			// The last run's last head is b's, which has no key of its own to take precedence (a's
			// has, after its third event).
			k, v := tx.Bucket(bucketHeadRuns).Cursor().Last()
			tampered := append([]byte(nil), v...)
			// The last head of the run ends the value with its stream key, type 0 id.
			for i := len(tampered) - 1; i >= 0; i-- {
				if tampered[i] == 0 {
					tampered[i] = 'x'
					break
				}
			}
			return tx.Bucket(bucketHeadRuns).Put(append([]byte(nil), k...), tampered)
		}, true},
		{"watermark of the wrong size", func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketMeta).Get(metaStateKey)
			return tx.Bucket(bucketMeta).Put(metaStateKey, append([]byte(nil), v[:len(v)-1]...))
		}, true},
		{"erasure job without its separators", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketJobs).Put(u64Key(1), []byte("order"))
		}, true},
		{"erasure job of a partial lsn", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketJobs).Put(u64Key(1), []byte("order\x00a\x00\x00\x00\x01"))
		}, true},
		{"erasure job with a short key", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketJobs).Put([]byte{1}, []byte("order\x00a\x00"))
		}, true},
		{"events run of a partial entry", func(tx *bolt.Tx) error {
			k, v := tx.Bucket(bucketEvents).Cursor().First()
			return tx.Bucket(bucketEvents).Put(append([]byte(nil), k...), append([]byte(nil), v[:len(v)-1]...))
		}, false},
		{"tails run of a partial entry", func(tx *bolt.Tx) error {
			k, v := tx.Bucket(bucketTails).Cursor().First()
			return tx.Bucket(bucketTails).Put(append([]byte(nil), k...), append([]byte(nil), v[:len(v)-1]...))
		}, false},
		{"tails key of the wrong size", func(tx *bolt.Tx) error {
			// Moved, not copied: a read ends at the stream's last event, so the damage must be
			// where that event is.
			tails := tx.Bucket(bucketTails)
			k, v := tails.Cursor().First()
			k, v = append([]byte(nil), k...), append([]byte(nil), v...)
			if err := tails.Delete(k); err != nil {
				return err
			}
			return tails.Put(append(k, 0), v)
		}, false},
		{"tails state of the wrong size", func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketMeta).Get(metaTailsKey)
			return tx.Bucket(bucketMeta).Put(metaTailsKey, append([]byte(nil), v[:len(v)-1]...))
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			// Checked at cleanup too: after the rebuild, or the one below.
			s, dir := openChecked(t, opts)
			a, b := key("order", "a"), key("order", "b")
			mustAppend(t, s, a, ev("was_placed", 1), ev("was_paid", 2))
			mustAppend(t, s, b, ev("was_placed", 3))
			flushCommitted(t, s)
			// An append to a stream of an earlier index transaction: its entry goes to the tails.
			mustAppend(t, s, a, ev("was_shipped", 4))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			updateIndex(t, dir, c.tamper)
			if err := Check(dir, opts); !errors.Is(err, ErrIndexMismatch) || !errors.Is(err, ErrBadIndex) {
				t.Fatalf("check: got %v, want ErrIndexMismatch and ErrBadIndex", err)
			}
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if c.loaded {
				if got := allEvents(t, s, a); len(got) != 3 || got[2].Type != "was_shipped" {
					t.Errorf("after the rebuild: events of %s: %v", a, got)
				}
			} else if err := s.Range(a, 1, ^uint64(0), func(Event) error { return nil }); !errors.Is(err, ErrBadIndex) {
				t.Errorf("read over the damage: got %v, want ErrBadIndex", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if !c.loaded {
				if err := Rebuild(dir, opts); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestRecordPositionsDamaged damages the index's position of a stream's only record. The log
// checksums what it reads, and a rewrite that drops a record changes its entries too, so a read
// of the stream must blame the index (ErrBadIndex), neither the log (ErrBadRecord) nor a missing
// record (ErrNotFound).
func TestRecordPositionsDamaged(t *testing.T) {
	cases := []struct {
		name string
		// more is how many records follow a's; the last is the one Open looks up.
		more   int
		tamper func(block []byte) []byte
		not    error
	}{
		{"the position of the next record", 1, func(block []byte) []byte {
			at := 0 // a's slot: the first one in use
			for binary.BigEndian.Uint64(block[at:]) == 0 {
				at += 8
			}
			copy(block[at:at+8], block[at+8:at+16])
			return block
		}, ErrBadRecord},
		{"a block cut short", recordsPerBlock, func(block []byte) []byte { return block[:8] }, ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOptions()
			s, dir := openChecked(t, opts)
			a, b := key("order", "a"), key("order", "b")
			mustAppend(t, s, a, ev("was_placed", 1))
			for i := range c.more {
				mustAppend(t, s, b, ev("was_noted", i))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			updateIndex(t, dir, func(tx *bolt.Tx) error {
				k, v := tx.Bucket(bucketRecords).Cursor().First()
				return tx.Bucket(bucketRecords).Put(append([]byte(nil), k...), c.tamper(append([]byte(nil), v...)))
			})
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Range(a, 1, ^uint64(0), func(Event) error { return nil }); !errors.Is(err, ErrBadIndex) || errors.Is(err, c.not) {
				t.Errorf("read of a: got %v, want ErrBadIndex", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Rebuild(dir, opts); err != nil {
				t.Fatal(err)
			}
		})
	}
}
