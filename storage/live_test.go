package storage

import (
	"fmt"
	"testing"
)

// TestLiveSetGenerations fills a liveSet's current generation past its bound: the add that finds
// it full starts a new one, the full one still answers, and the one before it is forgotten,
// keys of both kinds; a key relied on again moves up and outlives its generation.
func TestLiveSetGenerations(t *testing.T) {
	var l liveSet
	stream := StreamKey{Type: "order", ID: "o1"}
	key := func(i int) liveKey {
		k := liveKey{space: "s", liveName: liveName{key: fmt.Sprint("k", i)}}
		if i%2 == 1 {
			k.stream = StreamKey{Type: "order", ID: fmt.Sprint("o", i)}
		}
		return k
	}
	fill := func(from int) {
		for i := from; i < from+liveGenMax; i++ {
			l.add(key(i))
		}
	}
	fill(0)
	if !l.has(key(0)) || !l.has(key(1)) || l.len() != liveGenMax {
		t.Fatalf("full generation: has k0 %v, k1 %v, len %d, want true, true, %d", l.has(key(0)), l.has(key(1)), l.len(), liveGenMax)
	}
	fill(liveGenMax)
	if !l.has(key(0)) || !l.has(key(1)) || !l.has(key(liveGenMax)) || l.len() != 2*liveGenMax {
		t.Fatalf("two generations: has k0 %v, k1 %v, len %d", l.has(key(0)), l.has(key(1)), l.len())
	}
	// k2 is relied on again (the commit path adds it); k0 and k1 are not.
	l.add(key(2))
	if l.cur.n != 1 {
		t.Fatalf("a third generation holds %d keys, want 1", l.cur.n)
	}
	if l.has(key(0)) || l.has(key(1)) {
		t.Fatal("keys of the oldest generation are still known")
	}
	if !l.has(key(2)) || !l.has(key(liveGenMax+1)) {
		t.Fatal("a key moved up, or one of the previous generation, is forgotten")
	}
	l.add(key(2))
	if l.cur.n != 1 {
		t.Fatalf("a key added twice counts %d times", l.cur.n)
	}
	l.remove("s", fmt.Sprint("k", liveGenMax))
	if l.has(key(liveGenMax)) || l.has(key(liveGenMax+1)) || !l.has(key(2)) {
		t.Fatalf("after a delete: has its key %v, an ordered key %v, another plain key %v; want false, false, true",
			l.has(key(liveGenMax)), l.has(key(liveGenMax+1)), l.has(key(2)))
	}
	ordered := liveKey{space: "s", liveName: liveName{key: "k", stream: stream}}
	l.add(ordered)
	if !l.has(ordered) {
		t.Fatal("ordered key added after a delete is not known")
	}
}
