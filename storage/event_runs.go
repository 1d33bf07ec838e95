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
// (see store.go's indexTxMax for the measurements). Where runs start depends on the transactions,
// so a live index and a rebuild may cut a stream into different runs; Check compares entries.

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

// entryAt returns the entry of event idx of stream no from the events bucket, or nil. The bytes
// are bbolt's: valid until the transaction changes the bucket or ends.
func entryAt(b *bolt.Bucket, no, idx uint64) ([]byte, error) {
	k, v := seekRun(b.Cursor(), no, idx)
	if k == nil {
		return nil, nil
	}
	if err := checkRun(k, v); err != nil {
		return nil, err
	}
	_, first := runOf(k)
	if idx < first {
		return nil, nil
	}
	at := (idx - first) * entrySize
	return v[at : at+entrySize], nil
}

// putRun writes the entries of events first, first+1, ... of stream no (at most maxRunEntries),
// replacing those the bucket holds already. A run it overlaps is deleted, and whatever of it lies
// before or after the new entries is written again as a run of its own. When the caller knows the
// bucket holds nothing of the stream from first on (appends), fresh says so and spares the search.
func (x *indexTx) putRun(no, first uint64, entries []byte, fresh bool) error {
	if !fresh {
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

// runEntries walks the entries of one stream's runs in index order.
type runEntries struct {
	c     *bolt.Cursor
	no    uint64
	first uint64 // index of the run's first entry
	run   []byte // the current run's value; nil when the walk is over
	at    uint64 // offset of the next entry in run, in entries
	runs  int    // how many runs the walk entered
}

// walkRuns starts a walk of stream no's entries at event from.
func walkRuns(b *bolt.Bucket, no, from uint64) (*runEntries, error) {
	w := &runEntries{c: b.Cursor(), no: no}
	k, v := seekRun(w.c, no, from)
	if err := w.enter(k, v); err != nil {
		return nil, err
	}
	if w.run != nil && from > w.first {
		w.at = from - w.first
	}
	return w, nil
}

func (w *runEntries) enter(k, v []byte) error {
	w.run, w.at = nil, 0
	if k == nil {
		return nil
	}
	if no, _ := runOf(k); no != w.no {
		return nil
	}
	if err := checkRun(k, v); err != nil {
		return err
	}
	_, w.first = runOf(k)
	w.run = v
	w.runs++
	return nil
}

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
