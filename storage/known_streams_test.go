package storage

import (
	"fmt"
	"testing"
	"time"
)

// TestKnownStreamsFilter adds keys over several stages: none of them is ever denied, and few
// keys never added are taken for known.
func TestKnownStreamsFilter(t *testing.T) {
	f := newKnownStreams()
	if !f.mayHave(f.hashKey(key("order", "x"))) {
		t.Fatal("a filter whose scan has not finished denied a key")
	}
	f.ready.Store(true)
	const n = 40 * knownFirstCapacity
	for i := range n {
		f.addHashes(f.hashKey(key("order", fmt.Sprint("known-", i))))
	}
	if len(f.stages) < 6 {
		t.Fatalf("%d keys made %d stages, want them spread over at least 6", n, len(f.stages))
	}
	for i := range n {
		if k := key("order", fmt.Sprint("known-", i)); !f.mayHave(f.hashKey(k)) {
			t.Fatalf("%s was added and is denied", k)
		}
	}
	const probes = 100_000
	maybe := 0
	for i := range probes {
		if f.mayHave(f.hashKey(key("order", fmt.Sprint("unknown-", i)))) {
			maybe++
		}
	}
	// Each stage is near 0.1% when full, and a lookup checks them all.
	if rate := float64(maybe) / probes; rate > 0.01 {
		t.Errorf("false-positive rate %.3f over %d stages", rate, len(f.stages))
	}
}

// TestKnownStreamsAfterReopen reopens a store with streams in its index and, once the filter has
// read them, appends to each with the length it expects: a stream the filter missed would look
// new (length 0) and its append would conflict.
func TestKnownStreamsAfterReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	const streams = 3*knownScanBatch + 17 // several scan transactions
	lengths := map[StreamKey]uint64{}
	for i := range streams {
		k := key("order", fmt.Sprint("o-", i))
		n := 1 + i%3
		events := make([]NewEvent, n)
		for j := range events {
			events[j] = ev("was_noted", map[string]int{"n": j})
		}
		if _, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Exactly}, Events: events}}}); err != nil {
			t.Fatal(err)
		}
		lengths[k] = uint64(n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for !s.known.ready.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the scan of the streams did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	fresh := key("order", "fresh")
	if s.known.mayHave(s.known.hashKey(fresh)) {
		t.Skip("the filter takes the fresh key for known; nothing to test with this seed")
	}
	for k, n := range lengths {
		res, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Exactly, Length: n}, Events: []NewEvent{ev("was_noted", nil)}}}})
		if err != nil {
			t.Fatalf("append to %s at length %d: %v", k, n, err)
		}
		if res.Lengths[0] != n+1 {
			t.Fatalf("%s has length %d after the append, want %d", k, res.Lengths[0], n+1)
		}
	}
	res, err := s.Commit(&Record{Appends: []Append{{Stream: fresh, Expect: Expect{Kind: Exactly}, Events: []NewEvent{ev("was_noted", nil)}}}})
	if err != nil || res.Lengths[0] != 1 {
		t.Fatalf("first append to a new stream: %v, %v", res, err)
	}
	// The new stream is known from its commit on, before the index has it.
	if !s.known.mayHave(s.known.hashKey(fresh)) {
		t.Error("a stream a commit started is denied")
	}
}
