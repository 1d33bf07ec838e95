package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The names bucket holds its names in runs: nested buckets, each mapping type 0 id to a stream
// number in chunks of names (name_chunks.go), keyed by the highest stream number they cover (8B
// BE). Run i holds the names of the streams numbered above the key of run i-1 (0 for the first) up
// to its own key, so the runs partition the numbers 1..named and no name is in two of them. A run
// is measured by the numbers it covers.
//
// A merge (recent_names.go) writes the recent names as a new run, folding into it the newest runs
// no larger than what it holds so far, so every run is larger than the ones after it. A name is
// rewritten only when its run is folded, into a run at least twice as large: at most
// log2(named / smallest merge) times in its life. With merges of one size the runs are the digits
// of a binary counter, at most log2(named / merge) + 1 of them; with the merge sizes of
// recent_names.go a simulation up to 100 million streams never had more than 8 runs, and rewrote
// a name 3.8 times on average. One bucket rewritten whole at every merge (format 4) cost each
// merge in proportion to every name ever merged: over HTTP, with orders of ten items writing
// 70,000 new streams a second, a merge at 2.3 million streams took the indexer 1.5 s, and its
// writes stalled the log's fsyncs for up to 90 ms. For 3.3 million streams written by 300,000
// such orders (storage alone, no fsync), runs wrote 40% fewer bytes than the one bucket, in 15%
// less processor time.
//
// Readers look a name up in every run, oldest (largest) first, and list a type's ids by merging
// the runs' ordered names.

// nameRuns returns the keys of the names bucket's runs, oldest first.
func nameRuns(names *bolt.Bucket) []uint64 {
	var his []uint64
	c := names.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil && len(k) == 8 {
			his = append(his, binary.BigEndian.Uint64(k))
		}
	}
	return his
}

// lookupName returns the number of the stream whose key (type 0 id) is key, 0 if no run has it.
// A chunk it cannot read counts as not having the name; Check reports it.
func lookupName(names *bolt.Bucket, key []byte) uint64 {
	c := names.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue // not a run; Check reports it
		}
		rc := newRunCursor(names.Bucket(k))
		if found, no, err := rc.seek(key); err == nil && bytes.Equal(found, key) {
			return no
		}
	}
	return 0
}

// foldedRuns returns how many of the newest runs (keys his, oldest first) a merge of the numbers
// lo+1..hi folds into its new run: each, newest first, that covers no more numbers than the new
// run holds with the ones folded before it.
func foldedRuns(his []uint64, lo, hi uint64) int {
	size := hi - lo
	n := 0
	for i := len(his) - 1; i >= 0; i-- {
		var from uint64
		if i > 0 {
			from = his[i-1]
		}
		if his[i]-from > size {
			break
		}
		size += his[i] - from
		n++
	}
	return n
}

// writeRun writes the names fresh (in key order, numbered lo+1..hi) as the run keyed hi, merged
// with the newest runs that foldedRuns picks, and deletes those. Its chunks are slices from alloc
// (of length 0 and the capacity asked for).
func writeRun(names *bolt.Bucket, fresh []nameKey, lo, hi uint64, alloc func(int) []byte) error {
	his := nameRuns(names)
	folded := his[len(his)-foldedRuns(his, lo, hi):]
	run, err := names.CreateBucket(u64Key(hi))
	if err != nil {
		return fmt.Errorf("storage: create names run %d: %w", hi, err)
	}
	// Chunks arrive in key order, so full pages are never split again.
	run.FillPercent = 1.0
	w := chunkWriter{run: run, alloc: alloc}
	var sources []*runCursor
	var keys [][]byte
	var nos []uint64
	for _, f := range folded {
		rc := newRunCursor(names.Bucket(u64Key(f)))
		k, no, err := rc.first()
		if err != nil {
			return err
		}
		sources, keys, nos = append(sources, rc), append(keys, k), append(nos, no)
	}
	var freshKey, prev []byte
	nextFresh := func() {
		freshKey = nil
		if len(fresh) > 0 {
			freshKey = fresh[0].key
		}
	}
	nextFresh()
	for {
		least := -1 // index into sources; len(sources) for the fresh names
		var k []byte
		for i, sk := range keys {
			if sk != nil && (k == nil || bytes.Compare(sk, k) < 0) {
				least, k = i, sk
			}
		}
		if len(freshKey) > 0 && (k == nil || bytes.Compare(freshKey, k) < 0) {
			least, k = len(sources), freshKey
		}
		if least < 0 {
			break
		}
		// Keys come out in order, so a name in two places comes out twice in a row.
		if prev != nil && bytes.Equal(prev, k) {
			return fmt.Errorf("%w: stream %q is named twice", ErrBadRecord, k)
		}
		prev = append(prev[:0], k...)
		var no uint64
		if least == len(sources) {
			no = fresh[0].no
		} else {
			no = nos[least]
		}
		if err := w.add(k, no); err != nil {
			return err
		}
		if least == len(sources) {
			fresh = fresh[1:]
			nextFresh()
		} else if keys[least], nos[least], err = sources[least].next(); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	for _, f := range folded {
		if err := names.DeleteBucket(u64Key(f)); err != nil {
			return fmt.Errorf("storage: delete names run %d: %w", f, err)
		}
	}
	return nil
}

// listRuns appends to lists, for each run, up to limit ids of streams of type typ after cursor, in
// byte order. A run's list ends at a chunk it cannot read; Check reports it.
func listRuns(names *bolt.Bucket, typ, cursor string, limit int, lists [][]string) [][]string {
	prefix := append([]byte(typ), 0)
	from := append(append([]byte(nil), prefix...), cursor...)
	rc := names.Cursor()
	for rk, rv := rc.First(); rk != nil; rk, rv = rc.Next() {
		if rv != nil {
			continue
		}
		var ids []string
		c := newRunCursor(names.Bucket(rk))
		k, _, err := c.seek(from)
		for ; err == nil && k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _, err = c.next() {
			if id := string(k[len(prefix):]); id > cursor {
				ids = append(ids, id)
			}
		}
		lists = append(lists, ids)
	}
	return lists
}
