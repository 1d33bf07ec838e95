package storage

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// indexAll waits until every commit so far is in bbolt.
func indexAll(t testing.TB, s *Store) {
	t.Helper()
	flushCommitted(t, s)
}

// namedCount returns how many names the names bucket's runs hold and the watermark's named count.
func namedCount(t testing.TB, s *Store) (int, uint64) {
	t.Helper()
	var n int
	var wm watermark
	if err := s.view(func(tx *bolt.Tx) (err error) {
		names := tx.Bucket(bucketNames)
		for _, hi := range nameRuns(names) {
			if err := forRunNames(names.Bucket(u64Key(hi)), func([]byte, uint64) { n++ }); err != nil {
				return err
			}
		}
		wm, err = readWatermark(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n, wm.named
}

// TestNamesMergeInBulk: the names of new streams stay with the recent names until enough have
// gathered, then all go to the names bucket in one transaction. Lookups and listing see every
// stream throughout, a reopen reads the recent names back from the heads, and the index equals a
// rebuild (openChecked).
func TestNamesMergeInBulk(t *testing.T) {
	opts := testOptions()
	opts.namesMergeMin = 6
	s, dir := openChecked(t, opts)
	list := func(s *Store, typ, cursor string) string {
		t.Helper()
		ids, err := s.List(typ, cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(ids, ",")
	}
	for _, k := range []StreamKey{key("t", "e"), key("t", "a"), key("u", "c"), key("t", "d"), key("t", "b")} {
		mustAppend(t, s, k, ev("e", k.ID))
	}
	indexAll(t, s)
	if n, named := namedCount(t, s); n != 0 || named != 0 || s.names.len() != 5 {
		t.Fatalf("below the merge bound: names bucket %d (named %d), recent %d; want 0, 0, 5", n, named, s.names.len())
	}
	check := func(s *Store, when string) {
		t.Helper()
		if got := list(s, "t", ""); got != "a,b,d,e" {
			t.Fatalf("%s: list of t: %s", when, got)
		}
		if got := list(s, "t", "b"); got != "d,e" {
			t.Fatalf("%s: list of t after b: %s", when, got)
		}
		if got := list(s, "u", ""); got != "c" {
			t.Fatalf("%s: list of u: %s", when, got)
		}
		for _, k := range []StreamKey{key("t", "a"), key("u", "c")} {
			if n := mustLength(t, s, k); n != 1 {
				t.Fatalf("%s: %s has length %d", when, k, n)
			}
			if es := allEvents(t, s, k); len(es) != 1 || string(es[0].Data) != fmt.Sprintf("%q", k.ID) {
				t.Fatalf("%s: events of %s: %v", when, k, es)
			}
		}
	}
	check(s, "recent")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if s.names.len() != 5 {
		t.Fatalf("after reopen: %d recent names, want 5", s.names.len())
	}
	check(s, "reopened")

	mustAppend(t, s, key("t", "c"), ev("e", "c"))
	mustAppend(t, s, key("t", "a"), ev("e", "a2"))
	indexAll(t, s)
	if n, named := namedCount(t, s); n != 6 || named != 6 || s.names.len() != 0 {
		t.Fatalf("at the merge bound: names bucket %d (named %d), recent %d; want 6, 6, 0", n, named, s.names.len())
	}
	if got := list(s, "t", ""); got != "a,b,c,d,e" {
		t.Fatalf("merged: list of t: %s", got)
	}
	if n := mustLength(t, s, key("t", "a")); n != 2 {
		t.Fatalf("merged: t:a has length %d, want 2", n)
	}
	mustAppend(t, s, key("t", "f"), ev("e", "f"))
	indexAll(t, s)
	if got := list(s, "t", "c"); got != "d,e,f" {
		t.Fatalf("named and recent: list of t after c: %s", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if got := list(s, "t", ""); got != "a,b,c,d,e,f" {
		t.Fatalf("reopened: list of t: %s", got)
	}
	t.Cleanup(func() { s.Close() })
}

// TestReadersFollowStreamsTheIndexerMoves reads streams while the indexer moves them from the
// overlay to the recent names and from there to the names bucket, merging every few
// transactions: every acknowledged stream must be found, by a lookup and by a listing, at every
// moment.
func TestReadersFollowStreamsTheIndexerMoves(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	const streams = 600
	id := func(i int) string { return fmt.Sprintf("s%04d", i) }
	var acked atomic.Int64
	var failure atomic.Pointer[string]
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failure.CompareAndSwap(nil, &msg)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := int(acked.Load())
				if n == 0 {
					continue
				}
				i := rng.IntN(n)
				k := key("t", id(i))
				if l, err := s.Length(k); err != nil || l != 1 {
					fail("length of acknowledged %s: %d, %v", k, l, err)
					return
				}
				cursor := ""
				if i > 0 {
					cursor = id(i - 1)
				}
				if ids, err := s.List("t", cursor, 1); err != nil || !slices.Equal(ids, []string{id(i)}) {
					fail("list after %q: %v, %v; want %s", cursor, ids, err, id(i))
					return
				}
				if _, err := s.Event(k, 1); err != nil {
					fail("event 1 of %s: %v", k, err)
					return
				}
			}
		}()
	}
	for i := range streams {
		mustAppend(t, s, key("t", id(i)), ev("e", i))
		acked.Store(int64(i + 1))
		if i%7 == 6 {
			indexAll(t, s)
		}
	}
	close(stop)
	wg.Wait()
	if msg := failure.Load(); msg != nil {
		t.Fatal(*msg)
	}
	if n, named := namedCount(t, s); n == 0 || named == 0 {
		t.Fatalf("no merge happened: names bucket %d, named %d", n, named)
	}
	// Each merge folded the runs no larger than itself, so every run is larger than the next.
	var runs []uint64
	if err := s.view(func(tx *bolt.Tx) error { runs = nameRuns(tx.Bucket(bucketNames)); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(runs); i++ {
		lo := uint64(0)
		if i > 1 {
			lo = runs[i-2]
		}
		if runs[i]-runs[i-1] >= runs[i-1]-lo {
			t.Fatalf("runs %v: run %d is no smaller than the one before it", runs, i)
		}
	}
}

// TestRecentNamesCollide: names whose hashes are equal (here all of them) are told apart by their
// keys, for a look-up, a number given again, a listing and the entries a merge writes.
func TestRecentNamesCollide(t *testing.T) {
	for _, hash := range map[string]func(StreamKey) uint64{
		"distinct": newRecentNames().hash,
		"equal":    func(StreamKey) uint64 { return 7 },
	} {
		r := newRecentNames()
		r.hash = hash
		r.add([]nameEntry{{key("t", "b"), 1}, {key("t", "a"), 2}, {key("u", "a"), 3}, {key("tu", ""), 4}})
		r.add([]nameEntry{{key("t", "c"), 5}, {key("t", "a"), 6}})
		for k, want := range map[StreamKey]uint64{
			key("t", "a"): 6, key("t", "b"): 1, key("t", "c"): 5, key("u", "a"): 3, key("tu", ""): 4,
			key("t", "d"): 0, key("tua", ""): 0, key("t", "ab"): 0,
		} {
			if got := r.get(k); got != want {
				t.Errorf("get(%s) = %d, want %d", k, got, want)
			}
		}
		if n := r.len(); n != 5 {
			t.Errorf("len = %d, want 5", n)
		}
		if got := r.list("t", "", 10); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("list of t: %v", got)
		}
		r.add([]nameEntry{{key("t", "aa"), 7}})
		if got := r.list("t", "a", 2); !slices.Equal(got, []string{"aa", "b"}) {
			t.Errorf("list of t after a: %v", got)
		}
		es := r.entries(nil)
		slices.SortFunc(es, func(a, b nameEntry) int { return cmp.Compare(a.no, b.no) })
		want := []nameEntry{
			{key("t", "b"), 1}, {key("u", "a"), 3}, {key("tu", ""), 4},
			{key("t", "c"), 5}, {key("t", "a"), 6}, {key("t", "aa"), 7},
		}
		if !slices.Equal(es, want) {
			t.Errorf("entries: %v, want %v", es, want)
		}
		r.clear()
		if n, no := r.len(), r.get(key("t", "a")); n != 0 || no != 0 {
			t.Errorf("after clear: len %d, t:a numbered %d", n, no)
		}
		r.add([]nameEntry{{key("t", "z"), 8}})
		if got := r.list("t", "", 10); !slices.Equal(got, []string{"z"}) || r.get(key("t", "z")) != 8 {
			t.Errorf("after clear and add: list %v, t:z numbered %d", got, r.get(key("t", "z")))
		}
	}
}
