package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestTailRuns appends to streams written before, one index transaction per round: the runs
// gather in the tails, one epoch per transaction, and the rolling merge moves a stream or two to
// the events bucket in each, so that sweeps end and the span's lo moves up while the tails hold
// several epochs; a rewrite moves them all at once. Every stream reads back whole, from its middle
// and event by event after each round and after reopening, the tails' state counts the runs they
// hold, and the index equals a rebuild (openChecked).
func TestTailRuns(t *testing.T) {
	opts := testOptions()
	opts.tailMergeMin = 2
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
	state := func() tailState {
		t.Helper()
		var st tailState
		if err := s.view(func(tx *bolt.Tx) (err error) {
			if st, err = readTailState(tx.Bucket(bucketMeta)); err != nil {
				return err
			}
			if n := tx.Bucket(bucketTails).Stats().KeyN; st.runs != uint64(n) {
				t.Fatalf("the tails' state counts %d runs, the bucket holds %d", st.runs, n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return st
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
	if st := state(); !st.empty() {
		t.Fatalf("after the streams' first transaction the tails hold epochs %d..%d", st.lo, st.hi)
	}
	check(s, "round 0")
	const rounds = 40
	sweeps, widest, lo := 0, uint64(0), uint64(1) // the first epoch is round 1's
	for r := 1; r <= rounds; r++ {
		round(r)
		st := state()
		if st.epochs() > tailEpochsMax || st.hi != uint64(r) {
			t.Fatalf("after round %d the tails hold epochs %d..%d", r, st.lo, st.hi)
		}
		if st.lo > lo {
			sweeps++
			lo = st.lo
		}
		widest = max(widest, st.epochs())
		check(s, fmt.Sprintf("round %d", r))
	}
	// Two runs per transaction, of five streams that take one run each per round: a sweep takes
	// a few transactions, and every stream's runs wait in the tails meanwhile.
	if sweeps < 3 || widest < 3 {
		t.Fatalf("over %d rounds, %d sweeps ended and the tails held at most %d epochs", rounds, sweeps, widest)
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
	if st := state(); !st.empty() || st.runs != 0 {
		t.Fatalf("after a rewrite the tails hold epochs %d..%d, %d runs", st.lo, st.hi, st.runs)
	}
	check(s, "rewritten")
	round(rounds + 1)
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

// TestTailEpochsMax fills the span to tailEpochsMax, as tails that pile up faster than the
// rolling merge moves them would: the transaction's first tail run then merges them all, so a
// read never seeks more epochs than that.
func TestTailEpochsMax(t *testing.T) {
	db := openEmptyIndex(t)
	entry := func(idx uint64) []byte {
		e := make([]byte, entrySize)
		binary.BigEndian.PutUint64(e, idx)
		binary.BigEndian.PutUint64(e[8:], idx)
		return e
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		x, err := newIndexTx(tx, nil, nil, Options{}.tuning(), newKnownStreams().hashKey)
		if err != nil {
			return err
		}
		for e := uint64(1); e <= tailEpochsMax; e++ {
			if err := x.tails.Put(tailKey(nil, e, 1, e), entry(e)); err != nil {
				return err
			}
		}
		x.tailState = tailState{tailSpan: tailSpan{lo: 1, hi: tailEpochsMax}, runs: tailEpochsMax, sweep: 1}
		x.numberedBefore = 1
		if err := x.writeRun(1, tailEpochsMax+1, entry(tailEpochsMax+1), true); err != nil {
			return err
		}
		return x.finish()
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		st, err := readTailState(tx.Bucket(bucketMeta))
		if err != nil {
			return err
		}
		if want := (tailState{tailSpan: tailSpan{lo: tailEpochsMax + 1, hi: tailEpochsMax + 1}, runs: 1, sweep: tailEpochsMax + 1}); st != want {
			t.Errorf("tails state %+v, want %+v", st, want)
		}
		if n := tx.Bucket(bucketEvents).Stats().KeyN; n != 1 {
			t.Errorf("the events bucket holds %d runs, want the merged one", n)
		}
		runs, err := eventRunsOf(tx)
		if err != nil {
			return err
		}
		w, err := walkRuns(runs, 1, 1)
		if err != nil {
			return err
		}
		for want := uint64(1); ; want++ {
			idx, e, ok, err := w.next()
			if err != nil {
				return err
			}
			if !ok {
				if want != tailEpochsMax+2 {
					t.Errorf("the walk ended before event %d", want)
				}
				return nil
			}
			if idx != want || binary.BigEndian.Uint64(e) != want {
				t.Fatalf("event %d: index %d, entry %x", want, idx, e)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
}

// TestTailStateValues reads back tails states that decode but cannot describe any tails: each is
// ErrBadIndex, which Open answers with a rebuild, rather than a span that would hide runs.
func TestTailStateValues(t *testing.T) {
	db := openEmptyIndex(t)
	span := func(lo, hi uint64) tailSpan { return tailSpan{lo: lo, hi: hi} }
	for _, c := range []struct {
		name  string
		state tailState
		ok    bool
	}{
		{"empty", emptyTails, true},
		{"mid-sweep", tailState{tailSpan: span(3, 9), runs: 40, next: 17, sweep: 6}, true},
		{"sweep of the next epoch", tailState{tailSpan: span(3, 9), runs: 40, sweep: 10}, true},
		{"epoch zero", tailState{tailSpan: span(0, 9), sweep: 1}, false},
		{"lo past hi+1", tailState{tailSpan: span(11, 9), sweep: 11}, false},
		{"sweep before lo", tailState{tailSpan: span(3, 9), runs: 1, sweep: 2}, false},
		{"sweep past hi+1", tailState{tailSpan: span(3, 9), runs: 1, sweep: 11}, false},
		{"runs in an empty span", tailState{tailSpan: span(10, 9), runs: 1, sweep: 10}, false},
	} {
		var got tailState
		err := db.Update(func(tx *bolt.Tx) (err error) {
			if err := tx.Bucket(bucketMeta).Put(metaTailsKey, c.state.marshal()); err != nil {
				return err
			}
			got, err = readTailState(tx.Bucket(bucketMeta))
			return err
		})
		switch {
		case c.ok && (err != nil || got != c.state):
			t.Errorf("%s: read %+v, %v; want %+v", c.name, got, err, c.state)
		case !c.ok && !errors.Is(err, ErrBadIndex):
			t.Errorf("%s: got %v, want ErrBadIndex", c.name, err)
		}
	}
}
