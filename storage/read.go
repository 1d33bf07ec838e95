package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// durableHead is a stream's head as readers see it: the newer of the overlay's and bbolt's.
func (s *Store) durableHead(k StreamKey) (head, error) {
	oh := s.ov.head(k)
	recent := s.names.get(k)
	var bh head
	err := s.view(func(tx *bolt.Tx) error {
		if no := streamNo(tx, k, recent); no != 0 {
			nk := u64Key(no)
			b, err := headValue(tx.Bucket(bucketHeads), tx.Bucket(bucketHeadRuns), nk)
			if b != nil {
				return bh.unmarshal(nk, b)
			}
			return err
		}
		return nil
	})
	if oh.lsn > bh.lsn {
		return oh, err
	}
	return bh, err
}

// streamNo returns the number the index gave a stream, 0 if the index does not know it. recent
// is the stream's number in the recent names, read before tx began (see recentNames).
func streamNo(tx *bolt.Tx, k StreamKey, recent uint64) uint64 {
	if recent != 0 {
		return recent
	}
	return lookupName(tx.Bucket(bucketNames), streamKeyBytes(nil, k))
}

// Length returns the number of durable events in the stream, 0 for an unknown stream. O(1).
func (s *Store) Length(k StreamKey) (uint64, error) {
	h, err := s.durableHead(k)
	return h.Length, err
}

// Info returns what the index keeps about a stream; a stream without events has Length 0.
func (s *Store) Info(k StreamKey) (StreamInfo, error) {
	h, err := s.durableHead(k)
	return h.StreamInfo, err
}

// onlyEntry returns the entry of the event of the stream numbered no if the index has it in the
// stream's head, that is if the stream has one event.
func onlyEntry(tx *bolt.Tx, no uint64) (entry, bool, error) {
	nk := u64Key(no)
	b, err := headValue(tx.Bucket(bucketHeads), tx.Bucket(bucketHeadRuns), nk)
	if b == nil {
		return entry{}, false, err
	}
	var h head
	if err := h.unmarshal(nk, b); err != nil {
		return entry{}, false, err
	}
	if h.Length != 1 {
		return entry{}, false, nil
	}
	return h.onlyEntry(headOnly(b)), true, nil
}

// entries returns the entries of events from..to (inclusive, 1-based) of a stream, taking for
// each the newer of the overlay's and bbolt's version. Every slot must exist.
func (s *Store) entries(k StreamKey, from, to uint64) ([]entry, error) {
	if from > to {
		return nil, nil
	}
	out := make([]entry, to-from+1)
	s.ov.entries(k, from, out)
	recent := s.names.get(k)
	err := s.view(func(tx *bolt.Tx) error {
		no := streamNo(tx, k, recent)
		if no == 0 {
			return nil
		}
		runs, err := eventRunsOf(tx)
		if err != nil {
			return err
		}
		w, err := walkRuns(runs, no, from)
		if err != nil {
			return err
		}
		firstInBucket := false
		for {
			idx, v, ok, err := w.next()
			if err != nil {
				return err
			}
			if !ok || idx > to {
				break
			}
			firstInBucket = firstInBucket || idx == 1
			slot := &out[idx-from]
			if slot.holder == 0 || slot.holder < binary.BigEndian.Uint64(v) {
				if err := slot.unmarshal(v); err != nil {
					return err
				}
			}
			// An event is in one run only: past to, the walk would seek each epoch of the tails
			// for runs the stream cannot have, which is every epoch for a stream not appended to
			// since the last merge.
			if idx == to {
				break
			}
		}
		if w.inTails() {
			s.hook("tails")
		}
		if from == 1 && !firstInBucket {
			e, ok, err := onlyEntry(tx, no)
			if err != nil {
				return err
			}
			if ok && out[0].holder < e.holder {
				out[0] = e
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].holder == 0 {
			return nil, fmt.Errorf("%w: %s event %d has no index entry", ErrBadIndex, k, from+uint64(i))
		}
	}
	return out, nil
}

// loadRecord returns the record with the given lsn, from the cache or the log.
func (s *Store) loadRecord(lsn uint64) (*record, error) {
	if r := s.cache.get(lsn); r != nil {
		return r, nil
	}
	return s.readRecord(lsn, recordHint{})
}

// readRecord reads a record from the log, at hint if it is still valid, and caches it.
func (s *Store) readRecord(lsn uint64, hint recordHint) (*record, error) {
	payload, err := s.readPayloadAt(lsn, hint)
	if err != nil {
		return nil, err
	}
	r, err := unmarshalRecord(payload)
	if err != nil {
		return nil, err
	}
	s.cache.put(r)
	return r, nil
}

// recordHint is a record's position looked up ahead of the read. It stays valid until a
// compaction moves records.
type recordHint struct {
	pos   wal.Pos
	gen   uint64 // s.compactions when pos was looked up
	valid bool
}

// recordHints looks up, in one transaction, the positions of the records that hold es: a replay
// that misses the record cache would otherwise open a transaction for every record it reads.
// A record it cannot place gets no hint, and its read looks it up again and reports why.
func (s *Store) recordHints(es []entry) []recordHint {
	hints := make([]recordHint, len(es))
	s.compactMu.RLock()
	defer s.compactMu.RUnlock()
	gen := s.compactions
	var unindexed []int
	s.ov.mu.RLock()
	for i := range es {
		if i > 0 && es[i].holder == es[i-1].holder {
			continue
		}
		if pos, ok := s.ov.posLocked(es[i].holder); ok {
			hints[i] = recordHint{pos: pos, gen: gen, valid: true}
		} else {
			unindexed = append(unindexed, i)
		}
	}
	s.ov.mu.RUnlock()
	if len(unindexed) > 0 {
		s.view(func(tx *bolt.Tx) error {
			ri := recordsOf(tx)
			for _, i := range unindexed {
				if pos, ok, err := ri.get(es[i].holder); ok && err == nil {
					hints[i] = recordHint{pos: pos, gen: gen, valid: true}
				}
			}
			return nil
		})
	}
	for i := 1; i < len(es); i++ {
		if es[i].holder == es[i-1].holder {
			hints[i] = hints[i-1]
		}
	}
	return hints
}

// readPayload reads the payload of the record with the given lsn from the log, bypassing the
// cache.
func (s *Store) readPayload(lsn uint64) ([]byte, error) {
	return s.readPayloadAt(lsn, recordHint{})
}

func (s *Store) readPayloadAt(lsn uint64, hint recordHint) ([]byte, error) {
	s.compactMu.RLock()
	defer s.compactMu.RUnlock()
	pos := hint.pos
	if !hint.valid || hint.gen != s.compactions {
		var err error
		if pos, err = s.recordPos(lsn); err != nil {
			return nil, err
		}
	}
	kind, payload, err := s.wal.Read(pos)
	if err != nil {
		return nil, fmt.Errorf("storage: read record %d at %s: %w", lsn, pos, err)
	}
	// The log checksummed what it read, so an entry of another kind or another record there
	// means the position, which the index gave, is wrong.
	if kind != kindRecord {
		return nil, fmt.Errorf("%w: position %s of record %d holds a log entry of kind %d", ErrBadIndex, pos, lsn, kind)
	}
	got, err := recordLSN(payload)
	if err != nil {
		return nil, fmt.Errorf("storage: record %d at %s: %w", lsn, pos, err)
	}
	if got != lsn {
		return nil, fmt.Errorf("%w: position %s of record %d holds record %d", ErrBadIndex, pos, lsn, got)
	}
	return payload, nil
}

// recordPos finds a record in the log. REQUIRES: s.compactMu held (shared or exclusive).
func (s *Store) recordPos(lsn uint64) (wal.Pos, error) {
	s.ov.mu.RLock()
	pos, ok := s.ov.posLocked(lsn)
	s.ov.mu.RUnlock()
	if ok {
		return pos, nil
	}
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		if pos, ok, err = recordsOf(tx).get(lsn); err == nil && !ok {
			err = fmt.Errorf("%w: record %d", ErrNotFound, lsn)
		}
		return err
	})
	return pos, err
}

// eventFrom builds the Event that entry e locates.
func (s *Store) eventFrom(k StreamKey, idx uint64, e *entry) (Event, error) {
	r, err := s.loadRecord(e.holder)
	if err != nil {
		return Event{}, err
	}
	return eventIn(r, k, idx, e)
}

// eventIn builds the Event that entry e locates in r, the record holding it.
func eventIn(r *record, k StreamKey, idx uint64, e *entry) (Event, error) {
	g, ev, at, ok := r.eventAt(e.ordinal)
	if !ok || g.stream != k || at != idx {
		return Event{}, fmt.Errorf("%w: record %d does not hold %s event %d", ErrBadIndex, e.holder, k, idx)
	}
	return Event{Stream: k, Index: idx, StreamID: ev.sid, Type: ev.typ, Data: ev.data, Metadata: ev.meta, Timestamp: ev.ts, Hash: ev.hash}, nil
}

const rangeChunk = 1024

// rangeRetries bounds how often Range reads a chunk's index entries again because rewrites
// dropped the records they pointed to while it read them: each retry needs another rewrite of
// the same stream to finish in between.
const rangeRetries = 3

// Range calls fn with events from..to (1-based, inclusive) of a stream in order, clipped to the
// stream's durable length. It is the replay path: the index is read in chunks and fn runs outside
// every lock and transaction. An error from fn stops the iteration and is returned.
func (s *Store) Range(k StreamKey, from, to uint64, fn func(Event) error) error {
	h, err := s.durableHead(k)
	if err != nil {
		return err
	}
	from = max(from, 1)
	to = min(to, h.Length)
	for lo := from; lo <= to; lo += rangeChunk {
		hi := min(lo+rangeChunk-1, to)
		es, err := s.entries(k, lo, hi)
		if err != nil {
			return err
		}
		// Positions are looked up for the rest of the chunk (from es[hinted] on) at its first
		// record the cache lacks.
		var hints []recordHint
		hinted, retries := 0, 0
		var r *record
		for i := 0; i < len(es); {
			e := &es[i]
			// Consecutive events of a batch share their record, which a cache too small to keep
			// it would otherwise make us read again for each.
			if r == nil || r.lsn != e.holder {
				r = s.cache.get(e.holder)
			}
			if r == nil {
				if hints == nil {
					hints, hinted = s.recordHints(es[i:]), i
					s.hook("hinted")
				}
				if r, err = s.readRecord(e.holder, hints[i-hinted]); err != nil {
					if !errors.Is(err, ErrNotFound) || retries == rangeRetries {
						return err
					}
					// A rewrite of this stream dropped the record since es was read: the
					// index now points at the rewrite's records, so the rest is read again.
					retries++
					rest, err := s.entries(k, lo+uint64(i), hi)
					if err != nil {
						return err
					}
					copy(es[i:], rest)
					hints, r = nil, nil
					continue
				}
			}
			ev, err := eventIn(r, k, lo+uint64(i), e)
			if err != nil {
				return err
			}
			if err := fn(ev); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// Events returns up to count events of a stream whose stream id is after `after` (exclusive;
// the zero id means from the start), in stream order: the cursor semantics of
// GET /{type}/{id}/events.
func (s *Store) Events(k StreamKey, after StreamID, count int) ([]Event, error) {
	if count <= 0 {
		return nil, nil
	}
	h, err := s.durableHead(k)
	if err != nil || h.Length == 0 {
		return nil, err
	}
	from := uint64(1)
	if !after.IsZero() {
		// Stream ids increase with the index, so the first index after `after` is found by
		// binary search over the entries.
		lo, hi := uint64(1), h.Length+1
		for lo < hi {
			mid := lo + (hi-lo)/2
			es, err := s.entries(k, mid, mid)
			if err != nil {
				return nil, err
			}
			if after.Less(es[0].sid) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		from = lo
	}
	to := min(h.Length, from+uint64(count)-1)
	out := make([]Event, 0, to-from+1)
	err = s.Range(k, from, to, func(e Event) error { out = append(out, e); return nil })
	return out, err
}

// Event returns one event by its 1-based index.
func (s *Store) Event(k StreamKey, idx uint64) (Event, error) {
	h, err := s.durableHead(k)
	if err != nil {
		return Event{}, err
	}
	if idx == 0 || idx > h.Length {
		return Event{}, fmt.Errorf("%w: %s event %d of %d", ErrNotFound, k, idx, h.Length)
	}
	for retries := 0; ; retries++ {
		es, err := s.entries(k, idx, idx)
		if err != nil {
			return Event{}, err
		}
		s.hook("entry")
		ev, err := s.eventFrom(k, idx, &es[0])
		// A rewrite that dropped the record since the entry was read left the event in its own
		// record (see Range).
		if !errors.Is(err, ErrNotFound) || retries == rangeRetries {
			return ev, err
		}
	}
}

// Hashes returns the chain values h_1..h_n of a stream from the index, without reading events:
// the leaves of its Merkle root.
func (s *Store) Hashes(k StreamKey) ([][32]byte, error) {
	h, err := s.durableHead(k)
	if err != nil || h.Length == 0 {
		return nil, err
	}
	var out [][32]byte
	for lo := uint64(1); lo <= h.Length; lo += rangeChunk {
		es, err := s.entries(k, lo, min(lo+rangeChunk-1, h.Length))
		if err != nil {
			return nil, err
		}
		for i := range es {
			out = append(out, es[i].hash)
		}
	}
	return out, nil
}

// List returns up to limit ids of streams of the given type that have events, in byte order,
// starting after cursor (exclusive; "" starts at the beginning).
func (s *Store) List(typ, cursor string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	// Every indexed stream has events (the index numbers a stream at its first event).
	lists := [][]string{s.ov.ids(typ, cursor), s.names.list(typ, cursor, limit)}
	var ids []string
	err := s.view(func(tx *bolt.Tx) error {
		ids = listNames(tx.Bucket(bucketNames), typ, cursor, limit, lists)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Get returns the value of key in a record space, or ErrNotFound.
func (s *Store) Get(space, key string) ([]byte, error) {
	k := spaceKeyString(space, key)
	oe, inOverlay := s.ov.spaceEntry(k)
	be, inBolt := s.boltSpace(k)
	e, ok := oe, inOverlay
	if !ok || (inBolt && be.holder > oe.holder) {
		e, ok = be, inBolt
	}
	if !ok || !e.live {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, space, key)
	}
	return append([]byte(nil), e.value...), nil
}

// Scan calls fn for every live key of a record space that starts with prefix, in byte order.
func (s *Store) Scan(space, prefix string, fn func(key string, value []byte) error) error {
	_, _, err := s.scan(space, prefix, "", false, 0, fn)
	return err
}

// ScanPage is Scan over at most limit live keys that sort after the key after, for spaces too
// large to hold in memory at once: pass the returned last key as after to get the next page.
// visited is how many keys fn saw; fewer than limit means the space holds no more.
func (s *Store) ScanPage(space, prefix, after string, limit int, fn func(key string, value []byte) error) (last string, visited int, err error) {
	if limit <= 0 {
		return "", 0, fmt.Errorf("%w: scan page limit %d", ErrInvalid, limit)
	}
	return s.scan(space, prefix, after, true, limit, fn)
}

// scan merges the overlay's and bbolt's versions of the keys in range, in key order, keeping
// for each the version of the larger holder, and calls fn for up to limit live ones (0: all).
func (s *Store) scan(space, prefix, after string, paged bool, limit int, fn func(key string, value []byte) error) (string, int, error) {
	full := spaceKeyString(space, prefix)
	from, skipFrom := full, false
	if paged && after >= prefix {
		from, skipFrom = spaceKeyString(space, after), true
	}
	ov := s.ov.spaceRange(full, func(k string) bool { return k >= from && !(skipFrom && k == from) })
	var out []spaceItem
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSpace).Cursor()
		k, v := c.Seek([]byte(from))
		if k != nil && skipFrom && string(k) == from {
			k, v = c.Next()
		}
		for i := 0; limit <= 0 || len(out) < limit; {
			inBolt, inOverlay := k != nil && bytes.HasPrefix(k, []byte(full)), i < len(ov)
			if !inBolt && !inOverlay {
				break
			}
			var it spaceItem
			if inOverlay && (!inBolt || ov[i].key <= string(k)) {
				it = ov[i]
				i++
			}
			if inBolt && (it.key == "" || it.key == string(k)) {
				var e spaceEntry
				if err := e.unmarshal(append([]byte(nil), v...)); err != nil {
					return err
				}
				if it.key == "" || e.holder > it.e.holder {
					it = spaceItem{string(k), e}
				}
				k, v = c.Next()
			}
			if it.e.live {
				out = append(out, it)
			}
		}
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	skip := len(space) + 1
	last := ""
	for _, it := range out {
		last = it.key[skip:]
		if err := fn(last, it.e.value); err != nil {
			return last, 0, err
		}
	}
	return last, len(out), nil
}
