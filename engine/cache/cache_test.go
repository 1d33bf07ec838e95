package cache

import (
	"fmt"
	"strconv"
	"testing"
)

func entry(jsonLen int, length uint64) Entry {
	return Entry{Length: length, JSON: make([]byte, jsonLen)}
}

func TestGetReturnsWhatPutStored(t *testing.T) {
	c := New(1 << 20)
	c.Put("user:a", entry(10, 3))
	e, ok := c.Get("user:a")
	if !ok || e.Length != 3 {
		t.Fatalf("Get = %+v, %v; want length 3, true", e, ok)
	}
	if _, ok := c.Get("user:b"); ok {
		t.Fatal("Get of a key never put: got an entry")
	}
}

func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	// Every key lands in some shard; a budget of shardCount*one entry leaves room for exactly
	// one entry per shard, so within a shard the older entry must go.
	one := cost("k0000", &Entry{JSON: make([]byte, 100)})
	c := New(one * shardCount)
	keys := make([]string, 0, 200)
	for i := 0; i < 200; i++ {
		k := "k" + strconv.Itoa(1000+i)
		keys = append(keys, k)
		c.Put(k, entry(100, uint64(i)))
	}
	if used := c.Used(); used > one*shardCount {
		t.Fatalf("Used = %d, want at most the budget %d", used, one*shardCount)
	}
	// The most recent key is always present.
	if _, ok := c.Get(keys[len(keys)-1]); !ok {
		t.Fatal("most recently put key was evicted")
	}
	kept := 0
	for _, k := range keys {
		if _, ok := c.Get(k); ok {
			kept++
		}
	}
	if kept > shardCount {
		t.Fatalf("kept %d entries, want at most %d", kept, shardCount)
	}
}

func TestGetRefreshesRecency(t *testing.T) {
	one := cost("x0000", &Entry{JSON: make([]byte, 100)})
	c := New(2 * one * shardCount)
	// Three keys of one shard, each of the length the cost was computed with.
	var same []string
	first := c.shard("x0000")
	for i := 0; len(same) < 3; i++ {
		if k := fmt.Sprintf("x%04d", i); c.shard(k) == first {
			same = append(same, k)
		}
	}
	c.Put(same[0], entry(100, 0))
	c.Put(same[1], entry(100, 1))
	c.Get(same[0]) // same[1] is now the least recently used
	c.Put(same[2], entry(100, 2))
	if _, ok := c.Get(same[1]); ok {
		t.Errorf("%s should have been evicted as least recently used", same[1])
	}
	if _, ok := c.Get(same[0]); !ok {
		t.Errorf("%s was read recently and should have stayed", same[0])
	}
}

func TestDeleteAndDeletePrefix(t *testing.T) {
	c := New(1 << 20)
	c.Put("p1/user:a", entry(1, 1))
	c.Put("p1/user:b", entry(1, 1))
	c.Put("p2/user:a", entry(1, 1))
	c.Delete("p1/user:a")
	if _, ok := c.Get("p1/user:a"); ok {
		t.Error("Delete left the entry")
	}
	c.DeletePrefix("p1/")
	if _, ok := c.Get("p1/user:b"); ok {
		t.Error("DeletePrefix left p1/user:b")
	}
	if _, ok := c.Get("p2/user:a"); !ok {
		t.Error("DeletePrefix removed an entry of another prefix")
	}
	if c.Used() != cost("p2/user:a", &Entry{JSON: make([]byte, 1)}) {
		t.Errorf("Used = %d after deletes, want the cost of the one entry left", c.Used())
	}
}

func TestZeroBudgetKeepsNothing(t *testing.T) {
	c := New(0)
	c.Put("a", entry(1, 1))
	if _, ok := c.Get("a"); ok {
		t.Fatal("a zero budget kept an entry")
	}
}
