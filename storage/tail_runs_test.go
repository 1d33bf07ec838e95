package storage

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestTailRuns appends to streams written before, one index transaction per round: the runs
// gather in the tails, one epoch per transaction, until the transaction after tailEpochs of them
// moves them to the events bucket; a rewrite moves them at once. Every stream reads back whole,
// from its middle and event by event after each round and after reopening, and the index equals
// a rebuild (openChecked).
func TestTailRuns(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	const streams = 5
	keys := make([]StreamKey, streams)
	want := make([][]string, streams)
	for i := range keys {
		keys[i] = key("t", fmt.Sprint(i))
	}
	round := func(r int) {
		t.Helper()
		for i, k := range keys {
			var batch []NewEvent
			for range 1 + (r+i)%3 {
				v := r*1000 + len(want[i])
				batch = append(batch, ev("added", v))
				want[i] = append(want[i], dataOf(Event{Type: "added", Data: []byte(fmt.Sprint(v))}))
			}
			mustAppend(t, s, k, batch...)
		}
		flushCommitted(t, s)
	}
	span := func() tailSpan {
		t.Helper()
		var sp tailSpan
		if err := s.view(func(tx *bolt.Tx) (err error) {
			sp, err = readTailSpan(tx.Bucket(bucketMeta))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return sp
	}
	check := func(s *Store, step string) {
		t.Helper()
		for i, k := range keys {
			got := allEvents(t, s, k)
			if len(got) != len(want[i]) {
				t.Fatalf("%s: %s: %d events, want %d", step, k, len(got), len(want[i]))
			}
			for j, e := range got {
				if dataOf(e) != want[i][j] {
					t.Fatalf("%s: %s event %d is %s, want %s", step, k, j+1, dataOf(e), want[i][j])
				}
			}
			from := uint64(len(want[i])/2 + 1)
			n := 0
			if err := s.Range(k, from, ^uint64(0), func(e Event) error {
				if dataOf(e) != want[i][int(from)-1+n] {
					t.Fatalf("%s: %s from %d: event %d is %s, want %s", step, k, from, int(from)+n, dataOf(e), want[i][int(from)-1+n])
				}
				n++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != len(want[i])-int(from)+1 {
				t.Fatalf("%s: %s from %d: %d events, want %d", step, k, from, n, len(want[i])-int(from)+1)
			}
			for idx := range uint64(len(want[i])) {
				if e, err := s.Event(k, idx+1); err != nil || dataOf(e) != want[i][idx] {
					t.Fatalf("%s: %s event %d: %s, %v; want %s", step, k, idx+1, dataOf(e), err, want[i][idx])
				}
			}
		}
	}

	round(0) // numbers the streams: runs of this transaction go to the events bucket
	if sp := span(); !sp.empty() {
		t.Fatalf("after the streams' first transaction the tails hold epochs %d..%d", sp.lo, sp.hi)
	}
	check(s, "round 0")
	for r := 1; r <= 2*tailEpochs+1; r++ {
		round(r)
		sp := span()
		if epochs, want := sp.epochs(), uint64((r-1)%tailEpochs+1); epochs != want {
			t.Fatalf("after round %d the tails hold %d epochs (%d..%d), want %d", r, epochs, sp.lo, sp.hi, want)
		}
		check(s, fmt.Sprintf("round %d", r))
	}

	if _, err := s.Rewrite(keys[0], func(e Event) (NewEvent, error) {
		return NewEvent{Type: "redacted", Data: e.Data, Metadata: e.Metadata, Timestamp: e.Timestamp}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for j := range want[0] {
		want[0][j] = "redacted" + want[0][j][len("added"):]
	}
	flushCommitted(t, s)
	if sp := span(); !sp.empty() {
		t.Fatalf("after a rewrite the tails hold epochs %d..%d", sp.lo, sp.hi)
	}
	check(s, "rewritten")
	round(2*tailEpochs + 2)
	check(s, "appended after the rewrite")
	check(reopen(t, s, dir, opts), "reopened")
}

// TestReadStopsBeforeTails reads a stream whose events are all in the events bucket while the
// tails hold another stream's appends: the read must end at the stream's last event, not seek
// every epoch of the tails for more.
func TestReadStopsBeforeTails(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	quiet, busy := key("t", "quiet"), key("t", "busy")
	mustAppend(t, s, quiet, ev("added", 1), ev("added", 2))
	mustAppend(t, s, busy, ev("added", 1), ev("added", 2))
	flushCommitted(t, s)
	mustAppend(t, s, busy, ev("added", 3))
	flushCommitted(t, s)

	entered := 0
	s.stepHook = func(step string) {
		if step == "tails" {
			entered++
		}
	}
	defer func() { s.stepHook = nil }()
	for _, c := range []struct {
		k           StreamKey
		events      int
		wantEntered bool
	}{
		{quiet, 2, false},
		{busy, 3, true},
	} {
		entered = 0
		if got := allEvents(t, s, c.k); len(got) != c.events {
			t.Fatalf("%s: %d events, want %d", c.k, len(got), c.events)
		}
		if e, err := s.Event(c.k, 2); err != nil || dataOf(e) != dataOf(Event{Type: "added", Data: []byte("2")}) {
			t.Fatalf("%s event 2: %s, %v", c.k, dataOf(e), err)
		}
		if (entered > 0) != c.wantEntered {
			t.Errorf("%s: the reads entered the tails %d times, want entered=%v", c.k, entered, c.wantEntered)
		}
	}
}
