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
// fsyncs took 5 to 17 ms while those pages went to disk.
//
// A rolling merge moves the tail runs to the events bucket, a few streams at a time: each
// transaction (mergeTailsStep) takes the streams from where the last one stopped, in stream
// number order, moving all of each stream's tail runs (joined where consecutive) until it has
// moved a tailSweep-th of the runs the tails hold. A sweep over every stream thus takes about
// tailSweep transactions, each stream's page is rewritten once per sweep, and every transaction
// writes a share of those pages instead of one transaction all of them. A sweep that ends has
// moved every run of the epochs before the one it began in, so the span's lo moves up to there.
//
// Measured over those orders (bench/'s map/items=10/catalog=10000, 16 connections, alternated
// 4 and 5 s runs against the layout without tails): 1.5 to 17.5% more orders/s in nine pairs
// (about 6% in the median), an open-loop p99 of 12 to 29 ms against 18 to 73 (lower in eight),
// and a peak of 335 to 517 MB against 530 to 801; index transactions wrote 137,000 pages in two
// 5 s runs against 267,000. That layout merged all the tails at once every eighth transaction,
// as many pages as a transaction wrote before the tails (up to 16,700), and the log's fsyncs
// stalled behind those merges: every 32nd transaction (alternated 12 s runs) placed about 7% more
// orders than every 8th, but with open-loop p99s up to 277 ms; leaving the merge out altogether
// (reads break) gave p99s of 12 to 17 ms. The rolling merge, in alternated 12 s runs (six of it
// and of every 32nd, three of every 8th): 128,000 to 138,000 events/s against 128,000 to 134,000
// for the merge every 8th transaction and 133,000 to 144,000 for every 32nd; open-loop p99s of 13
// to 22 ms against 36 to 57 and 42 to 241; a peak of 474 to 651 MB against 670 to 838 and 417 to
// 490. Sweeps of 32 transactions instead of 16 were no faster (123,000 to 140,000).
//
// Invariants:
//   - The tails hold only appends: a run goes there only when it starts after every event the
//     index held for its stream. Anything else that writes a stream's runs (a carry, a rewrite's
//     replacement of entries) merges all the tails first, and the rolling merge moves all of a
//     stream's tail runs of earlier transactions at once, so the events bucket holds a stream's
//     earlier events, and its tail runs the later ones, in increasing epoch.
//   - Every tail run is in an epoch of lo..hi (meta's tails key), none when lo > hi; an epoch in
//     the span may hold none. The state's runs counts the runs the tails hold.
//   - Runs never overlap, across both buckets: readers take a stream's runs from the events
//     bucket, then from each epoch in turn, and Check compares the entries, not where they are.

// tailSweep is about how many transactions a sweep of the rolling merge takes: each moves at
// least a tailSweep-th of the tail runs (and at least tailMergeMin). The span then holds up to
// about twice as many epochs, which a read that needs a stream's tail runs seeks in turn (a read
// of a stream with nothing in the tails seeks none: Store.entries stops at its last event).
// In process, reading a stream of two or three events while the tails hold appends to 2,000
// other streams in every epoch: 3.7 µs at 8 or 32 epochs when the stream has no tail runs, 4.3 µs
// at 8 and 6.9 µs at 32 when its one tail run is in the last epoch.
const tailSweep = 16

// tailMergeMin is the fewest tail runs a transaction moves when the tails hold as many, so that
// under a light load the tails empty within a few transactions.
const tailMergeMin = 512

// tailEpochsMax bounds the span: a transaction that would open an epoch beyond it merges all the
// tails first. The rolling merge keeps the span near 2*tailSweep; this bounds what reads seek
// should the tails' runs pile up faster than the sweep moves them.
const tailEpochsMax = 4 * tailSweep

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

// tailSpan is the epochs lo..hi the tails bucket may hold runs of.
type tailSpan struct{ lo, hi uint64 }

// epochs is how many epochs the span holds (readTailState keeps lo at most hi+1).
func (t tailSpan) epochs() uint64 { return t.hi + 1 - t.lo }

func (t tailSpan) empty() bool { return t.epochs() == 0 }

// tailState is meta's tails key: the span, how many runs the tails hold, and where the rolling
// merge is: the stream number it goes on from, and the epoch its sweep began in (every run of an
// earlier epoch is moved by the time the sweep ends).
type tailState struct {
	tailSpan
	runs, next, sweep uint64
}

// emptyTails is the state of an index whose tails hold nothing, before its first epoch.
var emptyTails = tailState{tailSpan: tailSpan{lo: 1, hi: 0}, sweep: 1}

const tailStateSize = 40

func (t tailState) marshal() []byte {
	b := make([]byte, 0, tailStateSize)
	for _, v := range [...]uint64{t.lo, t.hi, t.runs, t.next, t.sweep} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

func readTailState(meta *bolt.Bucket) (tailState, error) {
	b := meta.Get(metaTailsKey)
	if len(b) != tailStateSize {
		return tailState{}, fmt.Errorf("%w: tails state of %d bytes", ErrBadIndex, len(b))
	}
	var v [5]uint64
	for i := range v {
		v[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	t := tailState{tailSpan: tailSpan{lo: v[0], hi: v[1]}, runs: v[2], next: v[3], sweep: v[4]}
	if t.lo == 0 || t.lo > t.hi+1 || t.sweep < t.lo || t.sweep > t.hi+1 || (t.empty() && t.runs != 0) {
		return tailState{}, fmt.Errorf("%w: tails state: epochs %d..%d, %d runs, sweep from epoch %d", ErrBadIndex, t.lo, t.hi, t.runs, t.sweep)
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
	t, err := readTailState(tx.Bucket(bucketMeta))
	if err != nil {
		return eventRuns{}, err
	}
	return eventRuns{events: tx.Bucket(bucketEvents), tails: tx.Bucket(bucketTails), span: t.tailSpan}, nil
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
// merging all the tails first when the span is full) at the transaction's first tail run.
func (x *indexTx) putTail(no, first uint64, entries []byte) error {
	t := &x.tailState
	if x.epoch == 0 {
		if t.epochs() >= tailEpochsMax {
			if err := x.mergeTails(); err != nil {
				return err
			}
		}
		x.epoch = t.hi + 1
		if t.empty() {
			t.lo, t.sweep, t.next = x.epoch, x.epoch, 0
		}
		t.hi = x.epoch
	}
	t.runs++
	x.tailsChanged = true
	return x.tails.Put(tailKey(x.alloc(tailKeySize), x.epoch, no, first), entries)
}

// mergeTails moves every run of the tails bucket to the events bucket and empties the tails. The
// transaction's own later tail runs open a new epoch.
func (x *indexTx) mergeTails() error {
	t := &x.tailState
	if t.empty() {
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
	if err := x.putJoined(runs); err != nil {
		return err
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
	*t = tailState{tailSpan: tailSpan{lo: t.hi + 1, hi: t.hi}, sweep: t.hi + 1}
	x.epoch = 0
	x.tailsChanged = true
	return nil
}

// mergeTailsStep is the rolling merge's share of this transaction: from stream t.next on, it moves
// the tail runs of one stream after another to the events bucket until it has moved
// max(runs/tailSweep, tailMergeMin) of them, all those of earlier transactions: a run waits in the
// tails at least until the next one. When no stream is left, the sweep ends: the epochs before
// the one it began in hold nothing, and the next transaction starts a new sweep.
func (x *indexTx) mergeTailsStep() error {
	t := &x.tailState
	last := t.hi
	if x.epoch != 0 {
		last = x.epoch - 1
	}
	if t.empty() || last < t.lo {
		return nil
	}
	budget := max((t.runs+tailSweep-1)/tailSweep, uint64(x.tuning.tailMergeMin))
	// One cursor per epoch, each at the epoch's first run of a stream numbered t.next or later.
	type epochCursor struct {
		c    *bolt.Cursor
		k, v []byte
	}
	at := make([]epochCursor, 0, last+1-t.lo)
	for e := t.lo; e <= last; e++ {
		c := x.tails.Cursor()
		if k, v := c.Seek(tailKey(nil, e, t.next, 0)); k != nil {
			if len(k) != tailKeySize {
				return checkTail(k, v)
			}
			if ke, _, _ := tailOf(k); ke == e {
				at = append(at, epochCursor{c, k, v})
			}
		}
	}
	var runs []tailRun
	var moved [][]byte // keys, deleted once the cursors are done
	for uint64(len(moved)) < budget {
		no, ok := uint64(0), false
		for _, ec := range at {
			if ec.k == nil {
				continue
			}
			if _, kno, _ := tailOf(ec.k); !ok || kno < no {
				no, ok = kno, true
			}
		}
		if !ok {
			t.lo, t.next = t.sweep, 0
			if x.epoch != 0 {
				t.sweep = x.epoch
			} else {
				t.sweep = t.hi + 1
			}
			break
		}
		// Epochs in increasing order, runs in each by first index: the stream's runs in order.
		runs = runs[:0]
		for i := range at {
			ec := &at[i]
			for ec.k != nil {
				if err := checkTail(ec.k, ec.v); err != nil {
					return err
				}
				e, kno, first := tailOf(ec.k)
				if kno != no {
					break
				}
				runs = append(runs, tailRun{no: no, first: first, v: ec.v})
				moved = append(moved, append(x.alloc(tailKeySize), ec.k...))
				if ec.k, ec.v = ec.c.Next(); ec.k != nil {
					if len(ec.k) != tailKeySize {
						return checkTail(ec.k, ec.v)
					}
					if ke, _, _ := tailOf(ec.k); ke != e {
						ec.k = nil
					}
				}
			}
		}
		if err := x.putJoined(runs); err != nil {
			return err
		}
		t.next = no + 1
	}
	for _, k := range moved {
		if err := x.tails.Delete(k); err != nil {
			return err
		}
	}
	t.runs -= min(t.runs, uint64(len(moved)))
	if t.lo > t.hi {
		t.runs = 0
	}
	x.tailsChanged = true
	return nil
}

// putJoined puts tail runs, sorted by stream and first index, into the events bucket, where each
// starts after the stream's last run (see the invariants above), joining a stream's consecutive
// runs up to maxRunEntries.
func (x *indexTx) putJoined(runs []tailRun) error {
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
		// pages of deleted keys and buckets only for later transactions, and copies what its
		// nodes reference from the map before it remaps the file.
		if err := x.events.Put(eventKey(x.alloc(eventKeySize), r.no, r.first), v); err != nil {
			return err
		}
		i = j
	}
	return nil
}
