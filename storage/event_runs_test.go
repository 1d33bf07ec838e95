package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestEventRunsModel writes runs of entries to a few streams, appending and overwriting ranges
// that start and end inside, before and after runs already there, in random transactions, and
// compares every stream's entries, read by walks and one by one, with a plain map; no two runs
// of a stream may overlap. It runs a new seed each time and the seeds that once failed.
func TestEventRunsModel(t *testing.T) {
	seeds := []struct {
		seed uint64
		why  string
	}{
		{rand.Uint64(), "a new one"},
		// A transaction's cutRuns emptied a leaf, and bbolt's Prev, from the run after it,
		// returned nil: the run before the emptied leaf was missed and left overlapping a new one.
		{3836060251589000619, "Prev into an emptied leaf"},
	}
	for _, c := range seeds {
		t.Run(c.why, func(t *testing.T) { eventRunsModel(t, c.seed) })
	}
}

func eventRunsModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	db := openEmptyIndex(t)
	const streams = 3
	model := [streams + 1]map[uint64]uint64{} // stream number -> event index -> the put that wrote it
	lengths := [streams + 1]uint64{}
	for no := range model {
		model[no] = map[uint64]uint64{}
	}
	put, numbered := uint64(0), uint64(0)
	for txn := range 200 {
		err := db.Update(func(tx *bolt.Tx) error {
			// A rolling merge of one stream's runs at a time keeps runs in the tails across
			// transactions.
			x, err := newIndexTx(tx, nil, nil, Options{tailMergeMin: 1}.tuning(), newKnownStreams().hashKey)
			if err != nil {
				return err
			}
			// Appends to the streams numbered before the transaction go to the tails, to the
			// others to the events bucket. The streams count as numbered one by one, as the
			// index numbers new streams.
			if numbered < streams && rng.IntN(20) == 0 {
				numbered++
			}
			x.numberedBefore = numbered
			for range 1 + rng.IntN(4) {
				no := 1 + rng.Uint64N(streams)
				var first uint64
				if lengths[no] == 0 || rng.IntN(2) == 0 {
					first = lengths[no] + 1 // an append
				} else {
					first = 1 + rng.Uint64N(lengths[no]) // a carry or a rewrite
				}
				n := 1 + rng.Uint64N(maxRunEntries)
				put++
				run := make([]byte, 0, n*entrySize)
				for i := range n {
					e := make([]byte, entrySize)
					binary.BigEndian.PutUint64(e, put)
					binary.BigEndian.PutUint64(e[8:], first+i)
					run = append(run, e...)
					model[no][first+i] = put
				}
				if err := x.writeRun(no, first, run, first > lengths[no]); err != nil {
					return err
				}
				lengths[no] = max(lengths[no], first+n-1)
			}
			return x.finish()
		})
		if err != nil {
			t.Fatalf("seed %d, txn %d: %v", seed, txn, err)
		}
		err = db.View(func(tx *bolt.Tx) error {
			runs, err := eventRunsOf(tx)
			if err != nil {
				return err
			}
			if runs.span.epochs() > tailEpochsMax {
				t.Fatalf("seed %d, txn %d: the tails hold epochs %d..%d", seed, txn, runs.span.lo, runs.span.hi)
			}
			state, err := readTailState(tx.Bucket(bucketMeta))
			if err != nil {
				return err
			}
			if n := runs.tails.Stats().KeyN; state.runs != uint64(n) {
				t.Fatalf("seed %d, txn %d: the tails' state counts %d runs, the bucket holds %d", seed, txn, state.runs, n)
			}
			for no := uint64(1); no <= streams; no++ {
				from := 1 + rng.Uint64N(lengths[no]+1)
				w, err := walkRuns(runs, no, from)
				if err != nil {
					return err
				}
				want := from
				for {
					idx, e, ok, err := w.next()
					if err != nil {
						return err
					}
					if !ok {
						break
					}
					if idx != want || binary.BigEndian.Uint64(e) != model[no][idx] || binary.BigEndian.Uint64(e[8:]) != idx {
						t.Fatalf("seed %d, txn %d: stream %d from %d: event %d holds put %d of event %d, want event %d of put %d",
							seed, txn, no, from, idx, binary.BigEndian.Uint64(e), binary.BigEndian.Uint64(e[8:]), want, model[no][want])
					}
					want++
				}
				if want != lengths[no]+1 && from <= lengths[no] {
					t.Fatalf("seed %d, txn %d: stream %d from %d: the walk ended before event %d of %d", seed, txn, no, from, want, lengths[no])
				}
				for range 5 {
					idx := rng.Uint64N(lengths[no] + 2)
					e, err := entryAt(runs, no, idx)
					if err != nil {
						return err
					}
					if p, ok := model[no][idx]; ok != (e != nil) || ok && binary.BigEndian.Uint64(e) != p {
						t.Fatalf("seed %d, txn %d: stream %d event %d: entry %x, want put %d (%v)", seed, txn, no, idx, e, p, ok)
					}
				}
			}
			// Runs in key order: each starts after the end of the one before it in its stream
			// (the walks above found the tails' runs after these, in order).
			if err := runs.tails.ForEach(checkTail); err != nil {
				return err
			}
			var lastNo, end uint64
			return runs.events.ForEach(func(k, v []byte) error {
				no, first := runOf(k)
				if err := checkRun(k, v); err != nil {
					return err
				}
				if runLen(v) > maxRunEntries {
					t.Fatalf("seed %d, txn %d: stream %d run at %d holds %d entries", seed, txn, no, first, runLen(v))
				}
				if no == lastNo && first <= end {
					t.Fatalf("seed %d, txn %d: stream %d: the run at %d overlaps the one before it, which ends at %d", seed, txn, no, first, end)
				}
				lastNo, end = no, first+runLen(v)-1
				return nil
			})
		})
		if err != nil {
			t.Fatalf("seed %d, txn %d: %v", seed, txn, err)
		}
	}
}

// TestLongStreamsInRuns commits a stream's events in one record (more than fit one run), then
// one by one in several transactions beside another stream's, rewrites it, and reads it back
// whole, from the middle and event by event after each step; the index must keep the events of
// one transaction in runs, and equal a rebuild (openChecked).
func TestLongStreamsInRuns(t *testing.T) {
	s, dir := openChecked(t, testOptions())
	a, b := key("t", "a"), key("t", "b")
	var want []string
	check := func(step string) {
		t.Helper()
		got := allEvents(t, s, a)
		if len(got) != len(want) {
			t.Fatalf("%s: %d events, want %d", step, len(got), len(want))
		}
		for i, e := range got {
			if dataOf(e) != want[i] {
				t.Fatalf("%s: event %d is %s, want %s", step, i+1, dataOf(e), want[i])
			}
		}
		from := uint64(len(want)/2 + 1)
		var mid []Event
		if err := s.Range(a, from, ^uint64(0), func(e Event) error { mid = append(mid, e); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(mid) != len(want)-int(from)+1 || dataOf(mid[0]) != want[from-1] {
			t.Fatalf("%s: from event %d: %d events, the first %s", step, from, len(mid), dataOf(mid[0]))
		}
		for _, idx := range []uint64{1, maxRunEntries, maxRunEntries + 1, uint64(len(want))} {
			e, err := s.Event(a, idx)
			if err != nil || dataOf(e) != want[idx-1] {
				t.Fatalf("%s: event %d: %s, %v; want %s", step, idx, dataOf(e), err, want[idx-1])
			}
		}
	}

	var batch []NewEvent
	for i := range 2*maxRunEntries + 88 {
		batch = append(batch, ev("added", i))
		want = append(want, dataOf(Event{Type: "added", Data: []byte(fmt.Sprint(i))}))
	}
	mustAppend(t, s, a, batch...)
	flushCommitted(t, s)
	check("one record")
	for i := range 300 {
		mustAppend(t, s, a, ev("added", len(want)))
		want = append(want, dataOf(Event{Type: "added", Data: []byte(fmt.Sprint(len(want)))}))
		mustAppend(t, s, b, ev("added", i))
		if i%100 == 99 {
			flushCommitted(t, s)
		}
	}
	check("one by one")
	if _, err := s.Rewrite(a, func(e Event) (NewEvent, error) {
		return NewEvent{Type: "redacted", Data: e.Data, Metadata: e.Metadata, Timestamp: e.Timestamp}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i] = "redacted" + want[i][len("added"):]
	}
	flushCommitted(t, s)
	check("rewritten")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The 1,200 events lie in runs, a few per stream (the rewrite wrote a's 900 again, in four),
	// not in a key each.
	runs, entries := 0, uint64(0)
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
			runs++
			entries += runLen(v)
			return nil
		})
	})
	if entries != uint64(len(want))+300 || runs > 12 {
		t.Fatalf("the events bucket holds %d entries in %d runs, want %d entries in runs", entries, runs, len(want)+300)
	}
}
