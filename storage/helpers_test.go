package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openChecked opens a store in a fresh directory and, when the test ends, closes it and checks
// every chain and that the index equals a rebuild from the log.
func openChecked(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("close: %v", err)
		}
		if err := Check(dir, opts); err != nil {
			t.Errorf("check after test: %v", err)
		}
	})
	return s, dir
}

// reopen closes s and opens the store in dir again, to be closed when the test ends.
func reopen(t testing.TB, s *Store, dir string, opts Options) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// updateIndex applies fn in one transaction to the index of the closed store in dir.
func updateIndex(t testing.TB, dir string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fn)
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
}

// openEmptyIndex opens a new index without a store, its buckets created, without fsync; it is
// closed when the test ends.
func openEmptyIndex(t testing.TB) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "index.db"), 0o644, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(createBuckets); err != nil {
		t.Fatal(err)
	}
	return db
}

// flushCommitted waits until bbolt holds every record committed so far.
func flushCommitted(t testing.TB, s *Store) {
	t.Helper()
	s.mu.Lock()
	last := s.mu.lsn
	s.mu.Unlock()
	if err := s.flush(last); err != nil {
		t.Fatal(err)
	}
}

func testOptions() Options {
	return Options{NoSync: true, SegmentSize: 1 << 20, Clock: newFakeClock().Now, namesMergeMin: 3}
}

// fakeClock is a settable clock for stream-id tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func key(typ, id string) StreamKey { return StreamKey{Type: typ, ID: id} }

func ev(typ string, data any) NewEvent {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return NewEvent{Type: typ, Data: b, Metadata: json.RawMessage(`{"actor":{"type":"user","id":"u1"},"timestamp":1705312800}`), Timestamp: 1705312800}
}

func appendOne(s *Store, k StreamKey, e Expect, events ...NewEvent) (CommitResult, error) {
	return s.Commit(&Record{Appends: []Append{{Stream: k, Expect: e, Events: events}}})
}

func mustAppend(t testing.TB, s *Store, k StreamKey, events ...NewEvent) CommitResult {
	t.Helper()
	res, err := appendOne(s, k, Expect{Kind: Skip}, events...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustLength(t testing.TB, s *Store, k StreamKey) uint64 {
	t.Helper()
	n, err := s.Length(k)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func allEvents(t testing.TB, s *Store, k StreamKey) []Event {
	t.Helper()
	var out []Event
	if err := s.Range(k, 1, ^uint64(0), func(e Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func dataOf(e Event) string { return fmt.Sprintf("%s %s", e.Type, e.Data) }
