package storage

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The events bucket keeps a stream's entries in runs: the key names the stream and the index of
// the run's first event, the value holds the entries of that event and of those that follow it,
// entrySize bytes each (index_codec.go). Runs of one stream never overlap. A transaction writes the
// entries it has for a stream's consecutive events as one run, at most maxRunEntries of them, so
// where there were one key and one bbolt Put per event there is one per stream and transaction:
// under orders over a catalog of inventory streams each transaction appends about a dozen events
// to each stream, and runs took a tenth of the CPU off each order in process, less in the server
// (see store.go's indexTxMax for the measurements). A transaction's runs of streams numbered
// before it go to the tails bucket first (tail_runs.go), and reach this one a few transactions
// later. Where runs start and which of them are in the tails depends on the transactions, so a
// live index and a rebuild may cut a stream into different runs; Check compares entries.

// maxRunEntries bounds a run, so that replacing one entry (a carry, a rewrite) copies at most this
// many; 256 entries take 19 KiB.
const maxRunEntries = 256

// runOf splits an events key into its stream number and the index of its run's first event.
func runOf(k []byte) (no, first uint64) {
	return binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
}

// runLen is the number of entries a run's value holds.
func runLen(v []byte) uint64 { return uint64(len(v) / entrySize) }

// checkRun reports a value that is not a whole number of entries.
func checkRun(k, v []byte) error {
	if len(v) == 0 || len(v)%entrySize != 0 {
		return fmt.Errorf("%w: events run %x of %d bytes", ErrBadIndex, k, len(v))
	}
	return nil
}

// seekRun moves c to the run of stream no that holds event idx, or to the stream's first run
// after idx if none holds it, and returns its key and value; nil when the stream has neither.
func seekRun(c *bolt.Cursor, no, idx uint64) ([]byte, []byte) {
	want := eventKey(nil, no, idx)
	k, v := c.Seek(want)
	if k != nil && string(k) == string(want) {
		return k, v
	}
	// A run that starts before idx may hold it.
	var pk, pv []byte
	if k == nil {
		pk, pv = c.Last()
	} else {
		pk, pv = c.Prev()
	}
	if pk == nil {
		// Either no key comes before, or bbolt's Prev and Last stepped into a leaf that this
		// write transaction emptied (they return nil there, where Next skips it): cutRuns deletes
		// runs, and a run it then missed would be left overlapping the new one.
		return scanRun(c, no, idx)
	}
	if pno, first := runOf(pk); pno == no && first+runLen(pv) > idx {
		return pk, pv
	}
	k, v = c.Seek(want)
	if k == nil {
		return nil, nil
	}
	if kno, _ := runOf(k); kno != no {
		return nil, nil
	}
	return k, v
}

// scanRun is seekRun by walking forward: a run holds at most maxRunEntries events, so the one
// that holds idx starts at most that many events before it.
func scanRun(c *bolt.Cursor, no, idx uint64) ([]byte, []byte) {
	from := uint64(0)
	if idx >= maxRunEntries {
		from = idx - maxRunEntries + 1
	}
	for k, v := c.Seek(eventKey(nil, no, from)); k != nil; k, v = c.Next() {
		kno, first := runOf(k)
		if kno != no {
			break
		}
		if first+runLen(v) > idx {
			return k, v
		}
	}
	return nil, nil
}

// entryAt returns the entry of event idx of stream no from the events bucket or the tails, or
// nil. The bytes are bbolt's: valid until the transaction changes the buckets or ends.
func entryAt(r eventRuns, no, idx uint64) ([]byte, error) {
	k, v := seekRun(r.events.Cursor(), no, idx)
	if k != nil {
		if err := checkRun(k, v); err != nil {
			return nil, err
		}
		if _, first := runOf(k); idx >= first {
			at := (idx - first) * entrySize
			return v[at : at+entrySize], nil
		}
	}
	// Newest first: the events read most are a stream's last ones.
	c := r.tails.Cursor()
	for epoch := r.span.hi; epoch >= r.span.lo && epoch > 0; epoch-- {
		for k, v := seekTail(c, epoch, no, idx); k != nil; k, v = c.Next() {
			if err := checkTail(k, v); err != nil {
				return nil, err
			}
			e, kno, first := tailOf(k)
			if e != epoch || kno != no || first > idx {
				break
			}
			if first+runLen(v) > idx {
				at := (idx - first) * entrySize
				return v[at : at+entrySize], nil
			}
		}
	}
	return nil, nil
}

// putRun writes the entries of events first, first+1, ... of stream no (at most maxRunEntries),
// replacing those the bucket holds already. A run it overlaps is deleted, and whatever of it lies
// before or after the new entries is written again as a run of its own. When the caller knows the
// bucket holds nothing of the stream from first on (appends), fresh says so and spares the search.
func (x *indexTx) putRun(no, first uint64, entries []byte, fresh bool) error {
	if !fresh {
		// The entries it replaces may be in the tails: cutRuns looks in the events bucket alone.
		if err := x.mergeTails(); err != nil {
			return err
		}
		if err := x.cutRuns(no, first, first+runLen(entries)-1); err != nil {
			return err
		}
	}
	return x.events.Put(eventKey(x.alloc(eventKeySize), no, first), entries)
}

// cutRuns deletes the runs of stream no that hold any of events from..to, and writes again, as
// runs, their entries outside that range.
func (x *indexTx) cutRuns(no, from, to uint64) error {
	type run struct {
		key, value []byte
	}
	var hit []run
	c := x.events.Cursor()
	for k, v := seekRun(c, no, from); k != nil; k, v = c.Next() {
		kno, first := runOf(k)
		if kno != no || first > to {
			break
		}
		if err := checkRun(k, v); err != nil {
			return err
		}
		// bbolt's bytes change under the writes below: keep copies.
		hit = append(hit, run{append(x.alloc(len(k)), k...), append(x.alloc(len(v)), v...)})
	}
	for _, r := range hit {
		if err := x.events.Delete(r.key); err != nil {
			return err
		}
	}
	for _, r := range hit {
		_, first := runOf(r.key)
		last := first + runLen(r.value) - 1
		if first < from {
			if err := x.events.Put(r.key, r.value[:(from-first)*entrySize]); err != nil {
				return err
			}
		}
		if last > to {
			if err := x.events.Put(eventKey(x.alloc(eventKeySize), no, to+1), r.value[(to+1-first)*entrySize:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// runEntries walks the entries of one stream's runs in index order: those of the events bucket,
// then those of each epoch of the tails.
type runEntries struct {
	r     eventRuns
	c     *bolt.Cursor // on the events bucket, then on the tails
	no    uint64
	from  uint64
	epoch uint64 // 0 while the walk is in the events bucket, then the epoch of the tails it is in
	first uint64 // index of the run's first entry
	run   []byte // the current run's value; nil when the walk is over
	at    uint64 // offset of the next entry in run, in entries
	runs  int    // how many runs the walk entered
}

// walkRuns starts a walk of stream no's entries at event from.
func walkRuns(r eventRuns, no, from uint64) (*runEntries, error) {
	w := &runEntries{r: r, c: r.events.Cursor(), no: no, from: from}
	if err := w.enter(seekRun(w.c, no, from)); err != nil {
		return nil, err
	}
	return w, nil
}

// enter makes k, v the current run if it is one of the stream's in the part of the index the walk
// is in, or else the stream's first run in the next epoch of the tails that has one; the walk is
// over when none has.
func (w *runEntries) enter(k, v []byte) error {
	w.run, w.at = nil, 0
	for {
		ok, err := w.isRun(k, v)
		if err != nil || ok {
			return err
		}
		switch {
		case w.epoch == 0 && !w.r.span.empty():
			w.epoch, w.c = w.r.span.lo, w.r.tails.Cursor()
		case w.epoch != 0 && w.epoch < w.r.span.hi:
			w.epoch++
		default:
			return nil
		}
		k, v = seekTail(w.c, w.epoch, w.no, w.from)
	}
}

// isRun takes k, v as the current run if it is one of the stream's where the walk is.
func (w *runEntries) isRun(k, v []byte) (bool, error) {
	if k == nil {
		return false, nil
	}
	if w.epoch == 0 {
		if no, _ := runOf(k); no != w.no {
			return false, nil
		}
		if err := checkRun(k, v); err != nil {
			return false, err
		}
		_, w.first = runOf(k)
	} else {
		if err := checkTail(k, v); err != nil {
			return false, err
		}
		epoch, no, first := tailOf(k)
		if epoch != w.epoch || no != w.no {
			return false, nil
		}
		w.first = first
	}
	w.run = v
	w.runs++
	if w.from > w.first {
		w.at = min(w.from-w.first, runLen(v))
	}
	return true, nil
}

// inTails reports whether the walk went past the events bucket into the tails.
func (w *runEntries) inTails() bool { return w.epoch != 0 }

// next returns the next entry and its event index; ok is false at the end of the stream's runs.
func (w *runEntries) next() (idx uint64, e []byte, ok bool, err error) {
	for w.run != nil && w.at >= runLen(w.run) {
		if err := w.enter(w.c.Next()); err != nil {
			return 0, nil, false, err
		}
	}
	if w.run == nil {
		return 0, nil, false, nil
	}
	idx, e = w.first+w.at, w.run[w.at*entrySize:(w.at+1)*entrySize]
	w.at++
	return idx, e, true, nil
}
