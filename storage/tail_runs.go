package storage

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The tails bucket gathers the runs a transaction appends to streams numbered before it, keyed by
// the transaction's epoch first (epoch | stream number | index of the run's first event), so that
// they land at the right edge of one bucket instead of on the page of each stream's last run in
// the events bucket. Orders over a catalog of 10,000 inventory streams append to each of them in
// every transaction: written to the events bucket, a transaction rewrote the page of every
// stream's last run, 12,000 to 14,000 pages (50 MB) for the 8 MB of runs it added, and the log's
// fsyncs took 5 to 17 ms while those pages went to disk. Once tailEpochs epochs have gathered,
// the transaction that would open the next one first moves every tail run to the events bucket
// (mergeTails), joining a stream's consecutive runs, so each stream's page is rewritten once per
// tailEpochs transactions.
//
// Measured over those orders (bench/'s map/items=10/catalog=10000, 16 connections, alternated
// 4 and 5 s runs against the layout without tails): 1.5 to 17.5% more orders/s in nine pairs
// (about 6% in the median), an open-loop p99 of 12 to 29 ms against 18 to 73 (lower in eight),
// and a peak of 335 to 517 MB against 530 to 801. Run after the orders to new streams on the same
// server, as make bench runs it: -14 to +13% in seven pairs, five of them in favour.
// Index transactions wrote 137,000 pages in two 5 s runs against 267,000, while the runs placed
// 8 to 14% more orders. A merge still writes as many pages as a transaction did before (up to
// 16,700), and the log's fsyncs above 5 ms were as many (44 against 46): they come from the
// merges now. In process (BenchmarkImplicationWrite's catalog case, three alternated runs of
// 100,000 orders), 5% fewer CPU seconds, most of it the kernel's.
//
// Invariants:
//   - The tails hold only appends: a run goes there only when it starts after every event the
//     index held for its stream. Anything else that writes a stream's runs (a carry, a rewrite's
//     replacement of entries) merges the tails first, so the events bucket holds a stream's
//     earlier events, and its tail runs the later ones, in increasing epoch.
//   - Epochs lo..hi (meta's tails key) all hold runs; none when lo > hi. A merge empties the
//     tails and sets lo to hi+1.
//   - Runs never overlap, across both buckets: readers take a stream's runs from the events
//     bucket, then from each epoch in turn, and Check compares the entries, not where they are.

// tailEpochs is how many transactions' runs the tails gather before they are merged into the
// events bucket. A merge rewrites the page of every stream the tails hold, however many epochs
// gathered, so fewer merges mean fewer pages written in all. A read that needs a stream's tail
// runs seeks each epoch up to the last one holding them; a read of a stream with nothing in the
// tails seeks none (Store.entries stops at the stream's last event).
//
// 32 against 8, over bench/'s orders to the catalog (16 connections, alternated 12 s runs, long
// enough for both to merge): 127,000 to 143,000 events/s against 120,000 to 131,000, higher in
// six pairs of six (by 0.4 to 13%, about 7% on average), a peak of 440 to 580 MB against 580 to
// 830, and open-loop p99s of 27 to 108 ms against 34 to 69 (a merge of 32 epochs is one longer
// stall). 16 won about 4%. In process, reading a stream of two or three events while the tails
// hold appends to 2,000 other streams in every epoch: 3.7 µs at 8 or 32 epochs when the stream
// has no tail runs; 4.3 µs at 8 and 6.9 µs at 32 when its one tail run is in the last epoch.
const tailEpochs = 32

// tailKeySize is the size of a tails key: epoch, stream number, index of the run's first event.
const tailKeySize = 24

func tailKey(dst []byte, epoch, streamNo, first uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, epoch)
	return eventKey(dst, streamNo, first)
}

// tailOf splits a tails key.
func tailOf(k []byte) (epoch, no, first uint64) {
	return binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]), binary.BigEndian.Uint64(k[16:])
}

// tailSpan is meta's tails key: the epochs lo..hi the tails bucket holds runs of.
type tailSpan struct{ lo, hi uint64 }

// emptyTails is the span of an index whose tails hold nothing, before its first epoch.
var emptyTails = tailSpan{lo: 1, hi: 0}

// epochs is how many epochs the span holds (readTailSpan keeps lo at most hi+1).
func (t tailSpan) epochs() uint64 { return t.hi + 1 - t.lo }

func (t tailSpan) empty() bool { return t.epochs() == 0 }

func (t tailSpan) marshal() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), t.lo), t.hi)
}

func readTailSpan(meta *bolt.Bucket) (tailSpan, error) {
	b := meta.Get(metaTailsKey)
	if len(b) != 16 {
		return tailSpan{}, fmt.Errorf("%w: tails span of %d bytes", ErrBadIndex, len(b))
	}
	t := tailSpan{lo: binary.BigEndian.Uint64(b), hi: binary.BigEndian.Uint64(b[8:])}
	if t.lo == 0 || t.lo > t.hi+1 {
		return tailSpan{}, fmt.Errorf("%w: tails span %d..%d", ErrBadIndex, t.lo, t.hi)
	}
	return t, nil
}

// eventRuns is where a transaction finds the runs of streams' events: the events bucket, then the
// tails of epochs span.lo..span.hi.
type eventRuns struct {
	events, tails *bolt.Bucket
	span          tailSpan
}

func eventRunsOf(tx *bolt.Tx) (eventRuns, error) {
	span, err := readTailSpan(tx.Bucket(bucketMeta))
	if err != nil {
		return eventRuns{}, err
	}
	return eventRuns{events: tx.Bucket(bucketEvents), tails: tx.Bucket(bucketTails), span: span}, nil
}

// keys is the number of runs both buckets hold.
func (r eventRuns) keys() int { return r.events.Stats().KeyN + r.tails.Stats().KeyN }

// seekTail moves c to the first run of stream no in epoch that may hold event from or a later
// one, and returns its key and value; nil when the epoch has none. A run holds at most
// maxRunEntries events, so none that starts further back reaches from.
func seekTail(c *bolt.Cursor, epoch, no, from uint64) ([]byte, []byte) {
	start := uint64(0)
	if from >= maxRunEntries {
		start = from - maxRunEntries + 1
	}
	k, v := c.Seek(tailKey(nil, epoch, no, start))
	if k == nil || len(k) != tailKeySize {
		return k, v
	}
	if e, kno, _ := tailOf(k); e != epoch || kno != no {
		return nil, nil
	}
	return k, v
}

// checkTail reports a tails key or value that does not decode.
func checkTail(k, v []byte) error {
	if len(k) != tailKeySize {
		return fmt.Errorf("%w: tails key %x", ErrBadIndex, k)
	}
	return checkRun(k, v)
}

// tailRun is a run of the tails bucket on its way to the events bucket.
type tailRun struct {
	no, first uint64
	v         []byte
}

// writeRun writes the entries of events first, first+1, ... of stream no: an append (fresh, see
// putRun) to a stream numbered before the transaction goes to the tails, anything else to the
// events bucket.
func (x *indexTx) writeRun(no, first uint64, entries []byte, fresh bool) error {
	if fresh && no <= x.numberedBefore {
		return x.putTail(no, first, entries)
	}
	return x.putRun(no, first, entries, fresh)
}

// putTail writes a run appended to stream no in this transaction's epoch, opening the epoch (and
// merging the tails first when tailEpochs are held) at the transaction's first tail run.
func (x *indexTx) putTail(no, first uint64, entries []byte) error {
	if x.epoch == 0 {
		if x.tailSpan.epochs() >= tailEpochs {
			if err := x.mergeTails(); err != nil {
				return err
			}
		}
		x.epoch = x.tailSpan.hi + 1
		if x.tailSpan.empty() {
			x.tailSpan.lo = x.epoch
		}
		x.tailSpan.hi = x.epoch
		x.tailsChanged = true
	}
	return x.tails.Put(tailKey(x.alloc(tailKeySize), x.epoch, no, first), entries)
}

// mergeTails moves every run of the tails bucket to the events bucket, where each starts after the
// stream's last run (see the invariants above), joining a stream's consecutive runs up to
// maxRunEntries, and empties the tails. The transaction's own later tail runs open a new epoch.
func (x *indexTx) mergeTails() error {
	if x.tailSpan.empty() {
		return nil
	}
	var runs []tailRun
	c := x.tails.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := checkTail(k, v); err != nil {
			return err
		}
		_, no, first := tailOf(k)
		runs = append(runs, tailRun{no: no, first: first, v: v})
	}
	slices.SortFunc(runs, func(a, b tailRun) int { return cmp.Or(cmp.Compare(a.no, b.no), cmp.Compare(a.first, b.first)) })
	for i := 0; i < len(runs); {
		r := runs[i]
		n, j := runLen(r.v), i+1
		for j < len(runs) && runs[j].no == r.no && runs[j].first == r.first+n && n+runLen(runs[j].v) <= maxRunEntries {
			n += runLen(runs[j].v)
			j++
		}
		if j < len(runs) && runs[j].no == r.no && runs[j].first < r.first+n {
			return fmt.Errorf("%w: tail runs of stream %d overlap at event %d", ErrBadIndex, r.no, runs[j].first)
		}
		v := r.v
		if j > i+1 {
			v = x.alloc(int(n) * entrySize)
			for _, t := range runs[i:j] {
				v = append(v, t.v...)
			}
		}
		// The values of the tails stay readable until the transaction commits: bbolt frees the
		// pages of a deleted bucket only for later transactions, and copies what its nodes
		// reference from the map before it remaps the file.
		if err := x.events.Put(eventKey(x.alloc(eventKeySize), r.no, r.first), v); err != nil {
			return err
		}
		i = j
	}
	if err := x.tx.DeleteBucket(bucketTails); err != nil {
		return err
	}
	tails, err := x.tx.CreateBucket(bucketTails)
	if err != nil {
		return err
	}
	tails.FillPercent = 1.0
	x.tails = tails
	x.tailSpan = tailSpan{lo: x.tailSpan.hi + 1, hi: x.tailSpan.hi}
	x.epoch = 0
	x.tailsChanged = true
	return nil
}
