package storage

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// assertHeadCacheIsIndex checks that every head the indexer's cache holds is the head bbolt
// holds, and that it holds the heads of want.
func assertHeadCacheIsIndex(t *testing.T, s *Store, want []StreamKey) {
	t.Helper()
	flushCommitted(t, s)
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	c := &s.idxHeads
	if len(c.entries) != len(want) {
		t.Fatalf("the cache holds %d heads, want %d", len(c.entries), len(want))
	}
	err := s.view(func(tx *bolt.Tx) error {
		x, err := newIndexTx(tx, nil, s.names, s.opts.tuning(), s.known.hashKey)
		if err != nil {
			return err
		}
		for _, k := range want {
			var cached, indexed txHead
			if !c.get(s.known.hashKey(k), k, &cached) {
				return fmt.Errorf("no cached head for %s", k)
			}
			if err := x.lookupHead(k, &indexed); err != nil {
				return err
			}
			if cached.head != indexed.head || cached.only != indexed.only || cached.bucketEnd != indexed.bucketEnd {
				return fmt.Errorf("%s: cached head %+v (only %+v, end %d), indexed %+v (only %+v, end %d)", k,
					cached.head, cached.only, cached.bucketEnd, indexed.head, indexed.only, indexed.bucketEnd)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHeadCacheFollowsIndex appends to the same streams over several index transactions, one of
// them a rewrite, and compares the cache with bbolt after each; Check then compares the index
// with a rebuild from the log.
func TestHeadCacheFollowsIndex(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	var ks []StreamKey
	for i := range 20 {
		k := key("inventory", fmt.Sprintf("sku-%d", i))
		ks = append(ks, k)
		mustAppend(t, s, k, ev("had_stock_added", i))
	}
	// Streams the transaction numbered are not cached: nothing looks them up again soon.
	assertHeadCacheIsIndex(t, s, nil)
	for round := range 3 { // lengths 1 to 2 (the only event moves to the events bucket), then on
		for i, k := range ks {
			mustAppend(t, s, k, ev("had_reservation_requested", round*100+i))
		}
		assertHeadCacheIsIndex(t, s, ks)
	}
	if _, err := s.Rewrite(ks[3], tombstone); err != nil {
		t.Fatal(err)
	}
	assertHeadCacheIsIndex(t, s, ks)
	// A head of one event keeps where that event is, which a rewrite moves.
	solo := key("inventory", "solo")
	mustAppend(t, s, solo, ev("had_stock_added", 1))
	assertHeadCacheIsIndex(t, s, ks)
	if _, err := s.Rewrite(solo, tombstone); err != nil {
		t.Fatal(err)
	}
	ks = append(ks, solo)
	assertHeadCacheIsIndex(t, s, ks)
	for _, k := range append(ks[:5:5], solo) {
		mustAppend(t, s, k, ev("had_reservation_requested", 0))
	}
	assertHeadCacheIsIndex(t, s, ks)
	if got := mustLength(t, s, ks[0]); got != 5 {
		t.Fatalf("length %d, want 5", got)
	}
}

func TestHeadCacheKeepsOneHeadPerHash(t *testing.T) {
	var c headCache
	a, b := &txHead{key: key("t", "a"), hash: 7}, &txHead{key: key("t", "b"), hash: 7}
	a.Length, b.Length = 3, 4
	c.keep([]*txHead{a})
	var h txHead
	if !c.get(7, a.key, &h) || h.Length != 3 || h.bucketEnd != 3 {
		t.Fatalf("a: %+v", h)
	}
	c.keep([]*txHead{b})
	if c.get(7, a.key, &h) {
		t.Fatal("a's head is still returned once b's replaced it")
	}
	if !c.get(7, b.key, &h) || h.Length != 4 {
		t.Fatalf("b: %+v", h)
	}
	// A key that is the other's with its separator moved is another key.
	if c.get(7, key("t\x00", ""), &h) || c.get(7, key("", "t\x00b"), &h) {
		t.Fatal("a key of other parts matched")
	}
	b.Length = 5
	before := len(c.keys)
	c.keep([]*txHead{b})
	if !c.get(7, b.key, &h) || h.Length != 5 || len(c.keys) != before {
		t.Fatalf("b after its update: %+v, key bytes %d then %d", h, before, len(c.keys))
	}
}

func TestHeadCacheEmptiesAtItsBound(t *testing.T) {
	var c headCache
	heads := make([]*txHead, headCacheMax+1)
	for i := range heads {
		heads[i] = &txHead{key: key("t", fmt.Sprint(i)), hash: uint64(i)}
	}
	c.keep(heads)
	if len(c.entries) != 1 {
		t.Fatalf("%d entries after %d heads, want 1 (emptied at the bound)", len(c.entries), len(heads))
	}
	var h txHead
	if !c.get(uint64(headCacheMax), heads[headCacheMax].key, &h) {
		t.Fatal("the head kept after emptying is missing")
	}
}
