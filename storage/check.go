package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// Rebuild recreates dir/index.db from the log alone. The store must be closed.
func Rebuild(dir string, opts Options) error {
	w, err := wal.Open(filepath.Join(dir, "log"), walOptions(opts))
	if err != nil {
		return fmt.Errorf("storage: open log: %w", err)
	}
	defer w.Close()
	path := filepath.Join(dir, "index.db")
	tmp := path + ".rebuild"
	if err := buildIndex(tmp, w, opts.NoSync, opts.tuning()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: install rebuilt index: %w", err)
	}
	return nil
}

func walOptions(o Options) wal.Options {
	return wal.Options{SegmentSize: o.SegmentSize, CompressThreshold: o.CompressThreshold, NoSync: o.NoSync, Logger: o.logger()}
}

// buildIndex writes a fresh index of every record in the log to path.
func buildIndex(path string, w *wal.Log, noSync bool, tuning indexTuning) error {
	os.Remove(path)
	db, err := bolt.Open(path, 0o644, boltOptions(noSync))
	if err != nil {
		return fmt.Errorf("storage: create index: %w", err)
	}
	defer db.Close()
	if err := db.Update(createBuckets); err != nil {
		return err
	}
	_, err = catchUp(db, w, newRecentNames(), tuning)
	return err
}

// Check verifies a closed store: every stream's hash chain, recomputed from the events in the
// log, matches what is stored, and the index equals a rebuild from the log. Errors wrap
// ErrChainMismatch or ErrIndexMismatch.
//
// An index behind the log is the normal state after a crash (Open catches it up), so the index
// is compared as Open would leave it: a copy of it is caught up first, and index.db itself is
// left as it was.
func Check(dir string, opts Options) error {
	w, err := wal.Open(filepath.Join(dir, "log"), walOptions(opts))
	if err != nil {
		return fmt.Errorf("storage: open log: %w", err)
	}
	defer w.Close()
	fresh := filepath.Join(dir, "index.check.db")
	defer os.Remove(fresh)
	if err := buildIndex(fresh, w, true, opts.tuning()); err != nil {
		return err
	}
	ro := &bolt.Options{ReadOnly: true}
	rebuilt, err := bolt.Open(fresh, 0o644, ro)
	if err != nil {
		return err
	}
	defer rebuilt.Close()
	if err := verifyChains(rebuilt, w); err != nil {
		return err
	}
	caughtUp := filepath.Join(dir, "index.check-current.db")
	defer os.Remove(caughtUp)
	if err := copyFile(filepath.Join(dir, "index.db"), caughtUp); err != nil {
		return fmt.Errorf("storage: copy index: %w", err)
	}
	current, err := bolt.Open(caughtUp, 0o644, boltOptions(true))
	if err != nil {
		return err
	}
	defer current.Close()
	var format uint64
	if err := current.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) != nil {
			format = formatOf(tx)
		}
		return nil
	}); err != nil {
		return err
	}
	if format != indexFormat {
		return fmt.Errorf("%w: index.db has format %d, this version writes %d; opening the store rebuilds it", ErrIndexMismatch, format, indexFormat)
	}
	recent := newRecentNames()
	if err := loadRecentNames(current, recent); err != nil {
		return asMismatch(err)
	}
	if _, err := catchUp(current, w, recent, opts.tuning()); err != nil {
		return asMismatch(err)
	}
	if err := checkJobs(current); err != nil {
		return asMismatch(err)
	}
	return asMismatch(compareIndexes(current, rebuilt))
}

// asMismatch reports index content that does not decode (ErrBadIndex) as what it is here, a
// difference between the index and the log, so that Check's errors keep to its two kinds.
func asMismatch(err error) error {
	if errors.Is(err, ErrBadIndex) && !errors.Is(err, ErrIndexMismatch) {
		return fmt.Errorf("%w: %w", ErrIndexMismatch, err)
	}
	return err
}

// copyFile copies src to a new file dst, which Check removes; nothing needs it durable.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// compareIndexes reports the first difference between two indexes of one log. Stream numbers
// depend on the records the log held when each stream was first indexed, and compaction drops
// records, so a live index and a rebuild may number streams differently; and how many names are
// merged, where the runs of a stream's events begin and which of them the tails hold, depend on
// where transactions began. Streams are compared by key, through the names bucket and the recent
// names, their heads through the numbers and their events entry by entry; everything else byte
// for byte.
func compareIndexes(a, b *bolt.DB) error {
	return a.View(func(ta *bolt.Tx) error {
		return b.View(func(tb *bolt.Tx) error {
			for _, name := range allBuckets {
				var err error
				switch {
				case bytes.Equal(name, bucketEvents), bytes.Equal(name, bucketTails), bytes.Equal(name, bucketNames), bytes.Equal(name, bucketHeadRuns):
					continue // compared stream by stream with the heads
				case bytes.Equal(name, bucketHeads):
					err = compareStreams(ta, tb)
				case bytes.Equal(name, bucketMeta):
					err = compareBucket(name, ta.Bucket(name), tb.Bucket(name), func(k, v []byte) []byte {
						switch {
						case bytes.Equal(k, metaStateKey) && len(v) == watermarkSize:
							return v[:watermarkLogSize] // without the counts of numbers and names
						case bytes.Equal(k, metaTailsKey):
							return nil // which transactions' runs the tails hold
						}
						return v
					})
				default:
					err = compareBucket(name, ta.Bucket(name), tb.Bucket(name), nil)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// compareBucket compares two buckets key by key, values through norm when it is set.
func compareBucket(name []byte, a, b *bolt.Bucket, norm func(k, v []byte) []byte) error {
	ca, cb := a.Cursor(), b.Cursor()
	ka, va := ca.First()
	kb, vb := cb.First()
	for ka != nil || kb != nil {
		na, nb := va, vb
		if norm != nil {
			na, nb = norm(ka, va), norm(kb, vb)
		}
		if !bytes.Equal(ka, kb) || !bytes.Equal(na, nb) {
			return fmt.Errorf("%w: bucket %s: index has %q=%x, rebuild has %q=%x", ErrIndexMismatch, name, ka, va, kb, vb)
		}
		ka, va = ca.Next()
		kb, vb = cb.Next()
	}
	return nil
}

// compareStreams compares the streams of two indexes in key order: their heads, and each stream's
// events; and checks that every head has a name and neither index holds events of a stream it
// does not know.
func compareStreams(ta, tb *bolt.Tx) error {
	sa, err := newKeyedStreams(ta)
	if err != nil {
		return err
	}
	sb, err := newKeyedStreams(tb)
	if err != nil {
		return err
	}
	ha, hb := ta.Bucket(bucketHeads), tb.Bucket(bucketHeads)
	ra, rb := ta.Bucket(bucketHeadRuns), tb.Bucket(bucketHeadRuns)
	ea, err := eventRunsOf(ta)
	if err != nil {
		return err
	}
	eb, err := eventRunsOf(tb)
	if err != nil {
		return err
	}
	var streams, runsA, runsB int
	for {
		ka, noA, okA, err := sa.next()
		if err != nil {
			return err
		}
		kb, noB, okB, err := sb.next()
		if err != nil {
			return err
		}
		if !okA && !okB {
			break
		}
		if okA != okB || !bytes.Equal(ka, kb) {
			return fmt.Errorf("%w: stream names: index has %q, rebuild has %q", ErrIndexMismatch, ka, kb)
		}
		va, err := headValue(ha, ra, u64Key(noA))
		if err != nil {
			return err
		}
		vb, err := headValue(hb, rb, u64Key(noB))
		if err != nil {
			return err
		}
		if va == nil || vb == nil || !bytes.Equal(headKey(va), ka) || !bytes.Equal(va, vb) {
			return fmt.Errorf("%w: bucket heads: stream %q: index has %x, rebuild has %x", ErrIndexMismatch, ka, va, vb)
		}
		streams++
		if err := compareEvents(ka, ea, eb, noA, noB, &runsA, &runsB); err != nil {
			return err
		}
	}
	na, err := countHeads(ta)
	if err != nil {
		return err
	}
	nb, err := countHeads(tb)
	if err != nil {
		return err
	}
	if na != streams || nb != streams {
		return fmt.Errorf("%w: bucket heads: index holds %d heads and rebuild %d, of %d named streams", ErrIndexMismatch, na, nb, streams)
	}
	if na, nb := ea.keys(), eb.keys(); na != runsA || nb != runsB {
		return fmt.Errorf("%w: buckets events and tails: index holds %d runs of known streams out of %d, rebuild %d of %d", ErrIndexMismatch, runsA, na, runsB, nb)
	}
	return nil
}

// countHeads counts the heads of an index, checking that its runs of heads hold the streams
// numbered from 1 on without a gap.
func countHeads(tx *bolt.Tx) (int, error) {
	n := 0
	err := forEachHead(tx, 1, func(no uint64, _ []byte) error {
		n++
		if no != uint64(n) {
			return fmt.Errorf("%w: the runs of heads begin at stream %d", ErrIndexMismatch, no)
		}
		return nil
	})
	return n, err
}

// compareEvents compares the entries of stream k, numbered noA in one index and noB in the other,
// event by event (the two may cut them into different runs), and adds the runs it saw to the
// counts.
func compareEvents(k []byte, ea, eb eventRuns, noA, noB uint64, runsA, runsB *int) error {
	wa, err := walkRuns(ea, noA, 0)
	if err != nil {
		return err
	}
	wb, err := walkRuns(eb, noB, 0)
	if err != nil {
		return err
	}
	for {
		ia, va, okA, err := wa.next()
		if err != nil {
			return err
		}
		ib, vb, okB, err := wb.next()
		if err != nil {
			return err
		}
		if !okA && !okB {
			break
		}
		if okA != okB || ia != ib || !bytes.Equal(va, vb) {
			return fmt.Errorf("%w: bucket events: stream %q: index has event %d=%x, rebuild has event %d=%x", ErrIndexMismatch, k, ia, va, ib, vb)
		}
	}
	*runsA += wa.runs
	*runsB += wb.runs
	return nil
}

// keyedStreams walks the streams of an index in key order: the names bucket's runs merged with
// the recent names, read from the heads numbered above the watermark's named count. It fails on
// a name in two places and on a run holding a number outside its range.
type keyedStreams struct {
	runs   []keyedRun
	recent []keyedStream
}

// keyedRun is a run of the names bucket being walked: its cursor, the current name and its number,
// and the numbers the run covers, lo+1..hi.
type keyedRun struct {
	c      *runCursor
	k      []byte
	no     uint64
	lo, hi uint64
}

type keyedStream struct {
	key []byte
	no  uint64
}

func newKeyedStreams(tx *bolt.Tx) (*keyedStreams, error) {
	w := &keyedStreams{}
	names := tx.Bucket(bucketNames)
	var lo uint64
	c := names.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || len(k) != 8 {
			return nil, fmt.Errorf("%w: bucket names: %q is not a run", ErrIndexMismatch, k)
		}
		r := keyedRun{c: newRunCursor(names.Bucket(k)), lo: lo, hi: binary.BigEndian.Uint64(k)}
		var err error
		if r.k, r.no, err = r.c.first(); err != nil {
			return nil, fmt.Errorf("%w, in run %d of bucket names", err, r.hi)
		}
		w.runs, lo = append(w.runs, r), r.hi
	}
	wm, err := readWatermark(tx)
	if err != nil {
		return nil, err
	}
	if lo != wm.named {
		return nil, fmt.Errorf("%w: bucket names: runs end at stream %d, the watermark's named count is %d", ErrIndexMismatch, lo, wm.named)
	}
	err = forRecentHeads(tx, func(key []byte, no uint64) error {
		w.recent = append(w.recent, keyedStream{key, no})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(w.recent, func(a, b keyedStream) int { return bytes.Compare(a.key, b.key) })
	return w, nil
}

// next returns the next stream's key and number, or ok false after the last one.
func (w *keyedStreams) next() (key []byte, no uint64, ok bool, err error) {
	least := -1 // index into runs; len(runs) for the recent names
	for i, r := range w.runs {
		if r.k != nil && (key == nil || bytes.Compare(r.k, key) < 0) {
			least, key = i, r.k
		}
	}
	if len(w.recent) > 0 && (key == nil || bytes.Compare(w.recent[0].key, key) < 0) {
		least, key = len(w.runs), w.recent[0].key
	}
	if least < 0 {
		return nil, 0, false, nil
	}
	for i, r := range w.runs {
		if i != least && bytes.Equal(r.k, key) {
			return nil, 0, false, fmt.Errorf("%w: stream %q is named twice", ErrIndexMismatch, key)
		}
	}
	if least < len(w.runs) && len(w.recent) > 0 && bytes.Equal(w.recent[0].key, key) {
		return nil, 0, false, fmt.Errorf("%w: stream %q is named and recent", ErrIndexMismatch, key)
	}
	if least == len(w.runs) {
		no = w.recent[0].no
		w.recent = w.recent[1:]
		return key, no, true, nil
	}
	r := &w.runs[least]
	if no = r.no; no <= r.lo || no > r.hi {
		return nil, 0, false, fmt.Errorf("%w: bucket names: %q has number %d, outside its run %d..%d", ErrIndexMismatch, key, no, r.lo+1, r.hi)
	}
	if r.k, r.no, err = r.c.next(); err != nil {
		return nil, 0, false, fmt.Errorf("%w, in run %d of bucket names", err, r.hi)
	}
	// Lookups search a run by its order.
	if r.k != nil && bytes.Compare(r.k, key) <= 0 {
		return nil, 0, false, fmt.Errorf("%w: bucket names: run %d has %q after %q", ErrIndexMismatch, r.hi, r.k, key)
	}
	return key, no, true, nil
}

// verifyChains recomputes every stream's chain from the events stored in the log.
func verifyChains(db *bolt.DB, w *wal.Log) error {
	records := make(map[uint64]*record)
	load := func(tx *bolt.Tx, lsn uint64) (*record, error) {
		if r := records[lsn]; r != nil {
			return r, nil
		}
		pos, ok, err := recordsOf(tx).get(lsn)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: record %d is not in the log", ErrIndexMismatch, lsn)
		}
		_, payload, err := w.Read(pos)
		if err != nil {
			return nil, err
		}
		r, err := unmarshalRecord(payload)
		if err != nil {
			return nil, err
		}
		records[lsn] = r
		return r, nil
	}
	return db.View(func(tx *bolt.Tx) error {
		runs, err := eventRunsOf(tx)
		if err != nil {
			return err
		}
		return forEachHead(tx, 1, func(no uint64, hv []byte) error {
			var h head
			if err := h.unmarshal(u64Key(no), hv); err != nil {
				return err
			}
			k, err := parseStreamKey(headKey(hv))
			if err != nil {
				return err
			}
			var prev [32]byte
			for idx := uint64(1); idx <= h.Length; idx++ {
				var e entry
				if h.Length == 1 {
					e = h.onlyEntry(headOnly(hv))
				} else {
					v, err := entryAt(runs, h.no, idx)
					if err != nil {
						return err
					}
					if v == nil {
						return fmt.Errorf("%w: %s event %d missing", ErrIndexMismatch, k, idx)
					}
					if err := e.unmarshal(v); err != nil {
						return err
					}
				}
				r, err := load(tx, e.holder)
				if err != nil {
					return err
				}
				g, ev, at, ok := r.eventAt(e.ordinal)
				if !ok || g.stream != k || at != idx {
					return fmt.Errorf("%w: %s event %d is not where the index says", ErrIndexMismatch, k, idx)
				}
				prev = chainNext(prev, ContentHash(k, ev.typ, ev.data, ev.meta))
				if prev != ev.hash || prev != e.hash {
					return fmt.Errorf("%w: %s event %d", ErrChainMismatch, k, idx)
				}
			}
			if h.Length > 0 && prev != h.LastHash {
				return fmt.Errorf("%w: %s last hash", ErrChainMismatch, k)
			}
			return nil
		})
	})
}

// VerifyStream recomputes one stream's chain from its events and returns the 1-based index of
// the first event whose stored chain value is wrong, or 0 when the chain verifies.
func (s *Store) VerifyStream(k StreamKey) (uint64, error) {
	var prev [32]byte
	var bad uint64
	errStop := errors.New("stop")
	err := s.Range(k, 1, ^uint64(0), func(e Event) error {
		prev = chainNext(prev, ContentHash(k, e.Type, e.Data, e.Metadata))
		if prev != e.Hash {
			bad = e.Index
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	return bad, nil
}
