package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// holdIndexer keeps the indexer from writing to bbolt until release is called. A test that fails
// first must not leave it blocked, since Close waits for it: release runs when the test ends too,
// before the store closes.
func holdIndexer(t *testing.T, s *Store) (release func()) {
	s.idxMu.Lock()
	held := true
	release = func() {
		if held {
			held = false
			s.idxMu.Unlock()
		}
	}
	t.Cleanup(release)
	return release
}

// TestReadsAcrossOverlayGenerations holds the indexer inside its transaction while more records
// commit: the overlay then has two generations, and every read takes each key's newest version
// from whichever holds it, before and after the older one reaches bbolt. The indexer is held
// before the first records commit: held after them, it could already have written them all, and
// no generation would be left for it to take.
func TestReadsAcrossOverlayGenerations(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("t", "x")
	put := func(key, value string) {
		t.Helper()
		if _, err := s.Commit(&Record{Puts: []Put{{Space: "sp", Key: key, Value: []byte(value)}}}); err != nil {
			t.Fatal(err)
		}
	}
	release := holdIndexer(t, s)
	mustAppend(t, s, k, ev("e", 1))
	put("a", "1")
	put("c", "4")

	deadline := time.Now().Add(10 * time.Second)
	for {
		s.ov.mu.RLock()
		taken := len(s.ov.gens) > 0 && s.ov.gens[0].sealed
		s.ov.mu.RUnlock()
		if taken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the indexer did not take the first generation")
		}
		// Cuts a pause the indexer may be in short; a poke it is not waiting for is dropped.
		select {
		case s.flushNow <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	mustAppend(t, s, k, ev("e", 2))
	mustAppend(t, s, key("t", "w"), ev("e", 3))
	put("a", "2")
	put("b", "3")

	check := func(when string) {
		t.Helper()
		var got []string
		for _, e := range allEvents(t, s, k) {
			got = append(got, string(e.Data))
		}
		if strings.Join(got, ",") != "1,2" || mustLength(t, s, k) != 2 {
			t.Fatalf("%s: events of %s: %v, length %d", when, k, got, mustLength(t, s, k))
		}
		if v, err := s.Get("sp", "a"); err != nil || string(v) != "2" {
			t.Fatalf("%s: sp/a is %q, %v; want the newer 2", when, v, err)
		}
		var kvs []string
		if err := s.Scan("sp", "", func(key string, value []byte) error {
			kvs = append(kvs, key+"="+string(value))
			return nil
		}); err != nil || strings.Join(kvs, ",") != "a=2,b=3,c=4" {
			t.Fatalf("%s: scan of sp: %v, %v", when, kvs, err)
		}
		if ids, err := s.List("t", "", 10); err != nil || strings.Join(ids, ",") != "w,x" {
			t.Fatalf("%s: list of t: %v, %v", when, ids, err)
		}
	}
	s.ov.mu.RLock()
	gens := len(s.ov.gens)
	s.ov.mu.RUnlock()
	if gens != 2 {
		t.Fatalf("the overlay has %d generations, want 2", gens)
	}
	check("two generations")
	release()
	indexAll(t, s)
	check("indexed")
}

// TestOverlayGenerationFullByEntries fills the overlay with records of an order and ten implied
// events, each with its space keys: a generation is full once its records put indexBatch entries,
// not once it holds indexBatch records, so one index transaction never builds a batch of several
// hundred thousand entries.
func TestOverlayGenerationFullByEntries(t *testing.T) {
	o := newOverlay(newKnownStreams().hashKey)
	const streams = 11
	perRecord := 1 + 2*streams // its positions, then an event and a space key per stream
	for lsn := uint64(1); ; lsn++ {
		r := &record{lsn: lsn, eff: lsn}
		for i := range streams {
			k := key("inventory", fmt.Sprintf("%d-%d", lsn, i))
			r.groups = append(r.groups, recGroup{stream: k, first: 1, events: []recEvent{{ts: 1}}})
			r.puts = append(r.puts, Put{Space: "refs", Key: k.String()})
		}
		o.mu.Lock()
		o.applyLocked(&applied{rec: r}, nil, nil)
		sealed := o.gens[0].sealed
		o.mu.Unlock()
		if sealed {
			if want := (indexBatch + perRecord - 1) / perRecord; int(lsn) != want {
				t.Fatalf("the generation was full after %d records, want %d (%d entries each)", lsn, want, perRecord)
			}
			return
		}
		if lsn > indexBatch {
			t.Fatalf("the generation holds %d records and is not full", lsn)
		}
	}
}

// TestOverlayTakesGenerationsForOneTransaction gives take overlays of generations of various
// sizes: it hands over the oldest ones that fit the bound together, at least one, and seals
// exactly those; drop forgets them and says whether the next one is full.
func TestOverlayTakesGenerationsForOneTransaction(t *testing.T) {
	for _, c := range []struct {
		name     string
		puts     []int // entries of each generation, oldest first
		max      int
		taken    int
		fullNext bool
	}{
		{"empty overlay", nil, 100, 0, false},
		{"one generation", []int{10}, 100, 1, false},
		{"several fit", []int{60, 30, 20}, 100, 2, false},
		{"all fit", []int{60, 30, 10}, 100, 3, false},
		{"the oldest alone is over the bound", []int{150, 10}, 100, 1, false},
		{"a full one left behind", []int{indexBatch, indexBatch}, indexBatch, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOverlay(newKnownStreams().hashKey)
			for _, n := range c.puts {
				o.gens = append(o.gens, &ovGen{batch: []*applied{{}}, puts: n})
				o.held.Add(int64(n))
			}
			all := slices.Clone(o.gens)
			gens := o.take(c.max)
			if len(gens) != c.taken {
				t.Fatalf("took %d generations, want %d", len(gens), c.taken)
			}
			for i, g := range all {
				if g.sealed != (i < c.taken) {
					t.Errorf("generation %d sealed: %v", i, g.sealed)
				}
			}
			if c.taken == 0 {
				return
			}
			if fullNext := o.drop(gens); fullNext != c.fullNext {
				t.Errorf("drop reported a full next generation: %v", fullNext)
			}
			left := 0
			for _, n := range c.puts[c.taken:] {
				left += n
			}
			if len(o.gens) != len(c.puts)-c.taken || o.held.Load() != int64(left) {
				t.Errorf("after drop: %d generations holding %d entries, want %d holding %d", len(o.gens), o.held.Load(), len(c.puts)-c.taken, left)
			}
		})
	}
}

// TestIndexerWritesPendingGenerationsTogether holds the indexer while records worth three full
// generations commit: once released, it writes them in at most two transactions (the first may
// be a generation it took before it was held), not one transaction each.
func TestIndexerWritesPendingGenerationsTogether(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	txID := func() (id int) {
		t.Helper()
		if err := s.view(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	indexAll(t, s)
	before := txID()
	release := holdIndexer(t, s)
	const records, putsEach = 12, 20_000
	for r := range records {
		rec := &Record{}
		for i := range putsEach {
			rec.Puts = append(rec.Puts, Put{Space: "sp", Key: fmt.Sprintf("%02d-%05d", r, i)})
		}
		if _, err := s.Commit(rec); err != nil {
			t.Fatal(err)
		}
	}
	s.ov.mu.RLock()
	gens := len(s.ov.gens)
	s.ov.mu.RUnlock()
	if gens < 3 {
		t.Fatalf("the overlay holds %d generations, want at least 3", gens)
	}
	release()
	indexAll(t, s)
	if n := txID() - before; n > 2 {
		t.Errorf("the indexer wrote %d generations in %d transactions, want at most 2", gens, n)
	}
	n := 0
	if err := s.Scan("sp", "", func(string, []byte) error { n++; return nil }); err != nil || n != records*putsEach {
		t.Fatalf("scan found %d keys (%v), want %d", n, err, records*putsEach)
	}
}

// TestOverlayHeadsOfRecord applies records whose heads come in the order of their groups, in
// another order, and in the same order only at first: applyLocked sets a group's head where it
// finds the group's stream while the orders agree, and the rest by key, so every stream must end
// with its own head whatever the order, and whether the streams' hashes differ or not.
func TestOverlayHeadsOfRecord(t *testing.T) {
	hashes := map[string]func(StreamKey) uint64{
		"hashKey":  newKnownStreams().hashKey,
		"one hash": func(StreamKey) uint64 { return 1 },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) { testOverlayHeadsOfRecord(t, hash) })
	}
}

func testOverlayHeadsOfRecord(t *testing.T, hash func(StreamKey) uint64) {
	for _, c := range []struct {
		name          string
		groups, heads string
	}{
		{"in group order", "abc", "abc"},
		{"reversed", "abc", "cba"},
		{"in order at first", "abc", "acb"},
		{"one group", "a", "a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOverlay(hash)
			r := &record{lsn: 7, eff: 7}
			for _, g := range c.groups {
				r.groups = append(r.groups, recGroup{stream: key("t", string(g)), first: 1, events: []recEvent{{ts: 1}}})
			}
			a := &applied{rec: r}
			// Each stream's head has a length of its own: the position of its letter.
			lengthOf := func(id rune) uint64 { return uint64(id-'a') + 1 }
			for _, h := range c.heads {
				a.heads = append(a.heads, headUpdate{key: key("t", string(h)), hash: hash(key("t", string(h))), head: head{StreamInfo: StreamInfo{Length: lengthOf(h)}, lsn: r.lsn}})
			}
			o.mu.Lock()
			o.applyLocked(a, nil, nil)
			o.mu.Unlock()
			for _, g := range c.groups {
				if got := o.head(key("t", string(g))); got.Length != lengthOf(g) || got.lsn != r.lsn {
					t.Errorf("head of %c: length %d lsn %d, want length %d lsn %d", g, got.Length, got.lsn, lengthOf(g), r.lsn)
				}
			}
			n := 0
			for _, st := range o.gens[0].streams {
				for ; st != nil; st = st.next {
					n++
				}
			}
			if n != len(c.groups) {
				t.Errorf("the generation holds %d streams, want %d", n, len(c.groups))
			}
		})
	}
}

// TestCommitWaitsForIndexRoom holds the indexer while commits fill the overlay to its bound: the
// next commit waits until the indexer has written the overlay to bbolt, and one that is waiting
// when the store closes returns ErrClosed instead of waiting for good. The store is marked behind
// (and says so in its log) from the first wait until the indexer has caught up.
func TestCommitWaitsForIndexRoom(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("close=%v", closing), func(t *testing.T) {
			opts := testOptions()
			// Four records of one event to a new stream: a position and an event each.
			opts.overlayMaxEntries = 8
			s, _ := openChecked(t, opts)
			release := holdIndexer(t, s)
			for i := range 4 {
				mustAppend(t, s, key("t", fmt.Sprint(i)), ev("e", i))
			}
			if !s.ov.crowded(opts.overlayMaxEntries) {
				t.Fatalf("the overlay holds %d entries after four commits, want %d", s.ov.held.Load(), opts.overlayMaxEntries)
			}
			late := key("t", "late")
			done := make(chan error, 1)
			go func() {
				_, err := appendOne(s, late, Expect{Kind: Skip}, ev("e", 4))
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("a commit to a full overlay returned before the indexer ran: %v", err)
			case <-time.After(200 * time.Millisecond):
			}
			if !s.behind.Load() {
				t.Fatal("a commit waits for the indexer and the store is not marked behind")
			}
			if !closing {
				release()
				if err := <-done; err != nil {
					t.Fatalf("the waiting commit: %v", err)
				}
				if n := mustLength(t, s, late); n != 1 {
					t.Fatalf("length of %s is %d after its commit returned, want 1", late, n)
				}
				for deadline := time.Now().Add(10 * time.Second); s.behind.Load(); time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the store is still marked behind after the indexer wrote the overlay")
					}
				}
				return
			}
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			// Let the indexer go only once Close has begun, so the waiting commit cannot slip in
			// before it.
			for {
				s.mu.Lock()
				c := s.mu.closed
				s.mu.Unlock()
				if c {
					break
				}
				time.Sleep(time.Millisecond)
			}
			release()
			if err := <-done; !errors.Is(err, ErrClosed) {
				t.Fatalf("the commit waiting when the store closed returned %v, want ErrClosed", err)
			}
			if err := <-closed; err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}
