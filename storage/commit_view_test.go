package storage

import (
	"fmt"
	"testing"
)

// The view forgets its least recently written heads first, only those readers see, and a few per
// new head.
func TestCommitViewForgetsOldestPublishedHeads(t *testing.T) {
	v := newCommitView()
	v.bound = 3
	k := func(i int) StreamKey { return key("t", fmt.Sprint(i)) }
	for i := 1; i <= 5; i++ {
		v.add(k(i), head{lsn: uint64(i)})
	}
	// Stream 1 written again (lsn 6) is now the most recent.
	h1, _ := v.get(k(1))
	v.written(h1, head{lsn: 6})

	// Only records up to lsn 2 are published: of the oldest (2, 3, ...), only 2 goes.
	v.prune(2)
	if _, ok := v.get(k(2)); ok || v.len() != 4 {
		t.Fatalf("after prune(2): len %d, stream 2 kept %v; want 4 heads without stream 2", v.len(), ok)
	}
	// Everything published: the oldest go until the bound, the recently written 1 stays.
	v.prune(6)
	if v.len() != 3 {
		t.Fatalf("after prune(6): len %d, want the bound 3", v.len())
	}
	for _, i := range []int{4, 5, 1} {
		if _, ok := v.get(k(i)); !ok {
			t.Fatalf("stream %d forgotten, want kept (most recently written)", i)
		}
	}
	// At most pruneStep heads go per call.
	for i := 10; i < 10+3*pruneStep; i++ {
		v.add(k(i), head{lsn: 1})
	}
	before := v.len()
	v.prune(100)
	if got := before - v.len(); got != pruneStep {
		t.Fatalf("one prune forgot %d heads, want %d", got, pruneStep)
	}
}
