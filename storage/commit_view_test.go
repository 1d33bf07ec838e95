package storage

import (
	"fmt"
	"testing"
)

// The view forgets its least recently written heads first, only those readers see, and a few per
// new head; with a hash per key and with one hash for every key (one chain).
func TestCommitViewForgetsOldestPublishedHeads(t *testing.T) {
	hashes := map[string]func(StreamKey) uint64{
		"hashKey":  newKnownStreams().hashKey,
		"one hash": func(StreamKey) uint64 { return 7 },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			v := newCommitView()
			v.bound = 3
			k := func(i int) StreamKey { return key("t", fmt.Sprint(i)) }
			get := func(i int) (*commitHead, bool) { return v.get(k(i), hash(k(i))) }
			for i := 1; i <= 5; i++ {
				v.add(k(i), hash(k(i)), head{lsn: uint64(i)})
			}
			// Stream 1 written again (lsn 6) is now the most recent.
			h1, _ := get(1)
			v.written(h1, head{lsn: 6})

			// Only records up to lsn 2 are published: of the oldest (2, 3, ...), only 2 goes.
			v.prune(2)
			if _, ok := get(2); ok || v.len() != 4 {
				t.Fatalf("after prune(2): len %d, stream 2 kept %v; want 4 heads without stream 2", v.len(), ok)
			}
			// Everything published: the oldest go until the bound, the recently written 1 stays.
			v.prune(6)
			if v.len() != 3 {
				t.Fatalf("after prune(6): len %d, want the bound 3", v.len())
			}
			for _, i := range []int{4, 5, 1} {
				if ch, ok := get(i); !ok || ch.key != k(i) {
					t.Fatalf("stream %d forgotten, want kept (most recently written)", i)
				}
			}
			for _, i := range []int{2, 3} {
				if _, ok := get(i); ok {
					t.Fatalf("stream %d kept, want forgotten", i)
				}
			}
			// At most pruneStep heads go per call.
			for i := 10; i < 10+3*pruneStep; i++ {
				v.add(k(i), hash(k(i)), head{lsn: 1})
			}
			before := v.len()
			v.prune(100)
			if got := before - v.len(); got != pruneStep {
				t.Fatalf("one prune forgot %d heads, want %d", got, pruneStep)
			}
		})
	}
}

// A view held above its bound (records not yet visible) grows its table and finds every head,
// and forgets them all once they are visible, its table back to the size it started with.
func TestCommitViewGrowsAndShrinks(t *testing.T) {
	v := newCommitView()
	start := len(v.slots)
	hash := newKnownStreams().hashKey
	n := 3 * len(v.slots)
	k := func(i int) StreamKey { return key("t", fmt.Sprint(i)) }
	for i := range n {
		v.add(k(i), hash(k(i)), head{lsn: uint64(i + 1)})
		v.prune(0)
	}
	if v.len() != n || len(v.slots) < n {
		t.Fatalf("%d heads none visible: len %d, %d slots; want all kept, a slot each", n, v.len(), len(v.slots))
	}
	for i := range n {
		if ch, ok := v.get(k(i), hash(k(i))); !ok || ch.lsn != uint64(i+1) {
			t.Fatalf("stream %d: %v %v", i, ch, ok)
		}
	}
	for v.len() > v.bound {
		v.prune(uint64(n))
	}
	if len(v.slots) != start {
		t.Fatalf("pruned to its bound: %d slots, want the %d it started with", len(v.slots), start)
	}
	for i := range n {
		_, ok := v.get(k(i), hash(k(i)))
		if want := i >= n-v.bound; ok != want {
			t.Fatalf("stream %d kept %v, want %v", i, ok, want)
		}
	}
}

// Heads the view forgets are taken again by the heads it adds: in steady state, adding a head and
// forgetting one allocates nothing, and every head kept still reads as written.
func TestCommitViewReusesForgottenHeads(t *testing.T) {
	v := newCommitView()
	v.bound = 3
	hash := newKnownStreams().hashKey
	keys := make([]StreamKey, 1000)
	for i := range keys {
		keys[i] = key("t", fmt.Sprint(i))
	}
	next := 0
	step := func() {
		k := keys[next%len(keys)]
		next++
		v.add(k, hash(k), head{lsn: uint64(next)})
		v.prune(uint64(next))
	}
	for range 10 {
		step()
	}
	if allocs := testing.AllocsPerRun(500, step); allocs != 0 {
		t.Errorf("adding a head and forgetting one allocates %v times, want 0", allocs)
	}
	for back := 1; back <= 5; back++ {
		i := next - back
		ch, ok := v.get(keys[i%len(keys)], hash(keys[i%len(keys)]))
		if want := back <= v.bound; ok != want || ok && ch.lsn != uint64(i+1) {
			t.Fatalf("head written %d ago: found %v (%v), want found %v with lsn %d", back, ok, ch, want, i+1)
		}
	}
}
