package storage

import (
	"fmt"
	"testing"
)

// TestLiveSetBound fills a liveSet past its bound: the add that finds it full forgets every key,
// of both kinds, and the set goes on counting and answering from there.
func TestLiveSetBound(t *testing.T) {
	var l liveSet
	stream := StreamKey{Type: "order", ID: "o1"}
	for i := range liveKeysMax {
		k := liveKey{space: "s", liveName: liveName{key: fmt.Sprint("k", i)}}
		if i%2 == 1 {
			k.stream = stream
		}
		l.add(k)
	}
	first := liveKey{space: "s", liveName: liveName{key: "k0"}}
	if !l.has(first) || l.n != liveKeysMax {
		t.Fatalf("full set: has k0 %v, n %d, want true, %d", l.has(first), l.n, liveKeysMax)
	}
	next := liveKey{space: "s", liveName: liveName{key: "next", stream: stream}}
	l.add(next)
	if l.has(first) || l.has(liveKey{space: "s", liveName: liveName{key: "k1", stream: stream}}) {
		t.Fatal("keys from before the set was emptied are still known")
	}
	if !l.has(next) || l.n != 1 {
		t.Fatalf("after emptying: has next %v, n %d, want true, 1", l.has(next), l.n)
	}
	l.add(next)
	if l.n != 1 {
		t.Fatalf("a key added twice counts %d times", l.n)
	}
	plain := liveKey{space: "s", liveName: liveName{key: "plain"}}
	l.add(plain)
	l.remove("s", "plain")
	if l.has(plain) || l.has(next) || l.n != 0 {
		t.Fatalf("after a delete: has plain %v, has ordered %v, n %d; want false, false, 0",
			l.has(plain), l.has(next), l.n)
	}
	l.add(next)
	if !l.has(next) || l.n != 1 {
		t.Fatalf("ordered key added after a delete: has %v, n %d", l.has(next), l.n)
	}
}
