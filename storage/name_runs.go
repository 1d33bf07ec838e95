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
			return fmt.Errorf("%w: stream %q is named twice", ErrBadIndex, k)
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

// listNames returns up to limit ids of streams of type typ after cursor, in byte order and without
// duplicates: the ids of the sorted lists (each already after cursor) merged with those of every
// run. It walks the runs side by side and reads a run's next name only once it has taken the last,
// so a page costs about limit names read however many runs there are. A run's walk ends at a chunk
// it cannot read; Check reports it.
func listNames(names *bolt.Bucket, typ, cursor string, limit int, lists [][]string) []string {
	prefix := append([]byte(typ), 0)
	from := append(append([]byte(nil), prefix...), cursor...)
	// heads[i] is the id run i's cursor rests on, nil once the run has no more of the type.
	var runs []*runCursor
	var heads [][]byte
	next := func(k []byte, err error) []byte {
		if err != nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		return k[len(prefix):]
	}
	rc := names.Cursor()
	for rk, rv := rc.First(); rk != nil; rk, rv = rc.Next() {
		if rv != nil {
			continue
		}
		c := newRunCursor(names.Bucket(rk))
		k, _, err := c.seek(from)
		id := next(k, err)
		if id != nil && string(id) == cursor {
			k, _, err = c.next()
			id = next(k, err)
		}
		runs, heads = append(runs, c), append(heads, id)
	}
	out := make([]string, 0, limit)
	for len(out) < limit {
		// The least id, from the runs first; comparing string(b) with a string allocates nothing,
		// so a run's id becomes a string only when it is taken.
		var least []byte
		for _, id := range heads {
			if id != nil && (least == nil || bytes.Compare(id, least) < 0) {
				least = id
			}
		}
		var leastID string
		fromList := false
		for _, l := range lists {
			switch {
			case len(l) == 0:
			case fromList:
				leastID = min(leastID, l[0])
			case least == nil || l[0] < string(least):
				leastID, fromList = l[0], true
			}
		}
		if !fromList {
			if least == nil {
				break
			}
			leastID = string(least)
		}
		// A stream may be in more than one place while the indexer moves it along.
		for i, id := range heads {
			if id != nil && string(id) == leastID {
				k, _, err := runs[i].next()
				heads[i] = next(k, err)
			}
		}
		for i, l := range lists {
			if len(l) > 0 && l[0] == leastID {
				lists[i] = l[1:]
			}
		}
		out = append(out, leastID)
	}
	return out
}
