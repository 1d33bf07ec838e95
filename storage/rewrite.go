package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// RewriteResult describes a rewritten stream.
type RewriteResult struct {
	Length   uint64
	LastHash [32]byte
}

const rewriteAttempts = 3

// Rewrite replaces every event of a stream with fn's replacement of it (a tombstone marker, for
// erasure), keeping the length and each event's stream id, and recomputing the chain. fn sees the
// old event, including its chain value. Rewrite returns only after the records that held the old
// events have been removed from the log files (their other content re-appended first), the
// stream's snapshot dropped and no cache holds the old bytes.
//
// A commit to the stream while Rewrite reads it makes Rewrite start again; after three attempts
// it returns a *ConflictError.
func (s *Store) Rewrite(k StreamKey, fn func(Event) (NewEvent, error)) (RewriteResult, error) {
	if !k.valid() {
		return RewriteResult{}, fmt.Errorf("%w: stream key %q", ErrInvalid, k.String())
	}
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	var res RewriteResult
	var err error
	for attempt := 0; attempt < rewriteAttempts; attempt++ {
		res, err = s.rewriteOnce(k, fn)
		if !errors.Is(err, ErrConflict) {
			break
		}
	}
	if err != nil {
		return RewriteResult{}, err
	}
	if err := s.runJobsLocked(); err != nil {
		return RewriteResult{}, err
	}
	if err := s.DropSnapshot(k); err != nil {
		return RewriteResult{}, err
	}
	return res, nil
}

func (s *Store) rewriteOnce(k StreamKey, fn func(Event) (NewEvent, error)) (RewriteResult, error) {
	h, err := s.durableHead(k)
	if err != nil {
		return RewriteResult{}, err
	}
	if h.Length == 0 {
		return RewriteResult{}, fmt.Errorf("%w: stream %s has no events", ErrNotFound, k)
	}
	rec := &record{groups: []recGroup{{stream: k, first: 1, events: make([]recEvent, 0, h.Length)}}}
	g := &rec.groups[0]
	holders := make(map[uint64]bool)
	var contents [][32]byte
	err = s.Range(k, 1, h.Length, func(old Event) error {
		ne, err := fn(old)
		if err != nil {
			return err
		}
		if ne.Type == "" {
			return fmt.Errorf("%w: replacement of %s event %d has no type", ErrInvalid, k, old.Index)
		}
		data, err := canonicalOrNull(ne.Data)
		if err != nil {
			return fmt.Errorf("%w: replacement data: %w", ErrInvalid, err)
		}
		meta, err := canonicalOrNull(ne.Metadata)
		if err != nil {
			return fmt.Errorf("%w: replacement metadata: %w", ErrInvalid, err)
		}
		g.events = append(g.events, recEvent{sid: old.StreamID, ts: ne.Timestamp, typ: ne.Type, data: data, meta: meta})
		contents = append(contents, ContentHash(k, ne.Type, data, meta))
		return nil
	})
	if err != nil {
		return RewriteResult{}, err
	}
	es, err := s.entries(k, 1, h.Length)
	if err != nil {
		return RewriteResult{}, err
	}
	for _, e := range es {
		holders[e.holder] = true
	}
	for l := range holders {
		rec.superseded = append(rec.superseded, l)
	}
	slices.Sort(rec.superseded)
	var prev [32]byte
	for i := range g.events {
		g.events[i].hash = chainNext(prev, contents[i])
		prev = g.events[i].hash
	}
	p := &prepared{rec: rec}
	p.encode()
	if err := p.checkSize(); err != nil {
		return RewriteResult{}, err
	}

	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return RewriteResult{}, err
	}
	hash := s.known.hashKey(k)
	cur, view, err := s.headLocked(k, hash)
	if err != nil {
		s.mu.Unlock()
		return RewriteResult{}, err
	}
	if cur.Length != h.Length {
		s.mu.Unlock()
		return RewriteResult{}, s.visibleConflict(&ConflictError{Stream: k, Kind: Exactly, Expected: h.Length, Actual: cur.Length, lsn: cur.lsn})
	}
	last := g.events[len(g.events)-1]
	cur.LastHash, cur.LastTimestamp, cur.FirstTimestamp = last.hash, last.ts, g.events[0].ts
	pending := s.writeLocked(p, []headUpdate{{key: k, hash: hash, head: cur, view: view}})
	s.mu.Unlock()
	if err := s.await(pending); err != nil {
		return RewriteResult{}, err
	}
	return RewriteResult{Length: h.Length, LastHash: last.hash}, nil
}

// runJobs finishes erasures that a crash interrupted.
func (s *Store) runJobs() error {
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	return s.runJobsLocked()
}

// job is the work of a rewrite record (stream set) or of an erasure record (stream zero).
type job struct {
	lsn    uint64
	stream StreamKey
	drop   []uint64
}

func (j job) erasure() bool { return j.stream == StreamKey{} }

// runJobsLocked carries out every pending erasure job, of Rewrite or Erase: re-append the
// still-current content of the superseded records, then compact the segments that hold them (and
// for Erase, vacuum the index). Each step is idempotent, so a crash anywhere is repaired by
// running the job again at open. REQUIRES: s.rewriteMu held.
func (s *Store) runJobsLocked() error {
	s.mu.Lock()
	last := s.mu.lsn
	s.mu.Unlock()
	if err := s.flush(last); err != nil {
		return err
	}
	var jobs []job
	err := s.view(func(tx *bolt.Tx) (err error) {
		jobs, err = readJobs(tx)
		return err
	})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		start := time.Now()
		if err := s.runJob(j); err != nil {
			if j.erasure() {
				return fmt.Errorf("storage: erase old record-space values (record %d): %w", j.lsn, err)
			}
			return fmt.Errorf("storage: erase old versions of %s: %w", j.stream, err)
		}
		if j.erasure() {
			s.log.Info("storage: erasure compacted", "records", len(j.drop), "took", time.Since(start))
		} else {
			s.log.Info("storage: rewrite compacted", "stream", j.stream.String(), "records", len(j.drop), "took", time.Since(start))
		}
	}
	return nil
}

// readJobs decodes the pending jobs. Open reads them while it loads the index too, so that a job
// that does not decode (ErrBadIndex) has the index rebuilt rather than stopping the server.
func readJobs(tx *bolt.Tx) ([]job, error) {
	var jobs []job
	err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		st, rest, ok := bytes.Cut(v, []byte{0})
		id, lsns, ok2 := bytes.Cut(rest, []byte{0})
		if !ok || !ok2 || len(k) != 8 || len(lsns)%8 != 0 {
			return fmt.Errorf("%w: job %x", ErrBadIndex, k)
		}
		jobs = append(jobs, job{lsn: binary.BigEndian.Uint64(k), stream: StreamKey{Type: string(st), ID: string(id)}, drop: unmarshalLSNs(lsns)})
		return nil
	})
	return jobs, err
}

// checkJobs reports a pending job that does not decode (ErrBadIndex).
func checkJobs(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		_, err := readJobs(tx)
		return err
	})
}

func (s *Store) runJob(j job) error {
	var lastCarry uint64
	for _, x := range j.drop {
		l, err := s.carry(x)
		if err != nil {
			return err
		}
		lastCarry = max(lastCarry, l)
	}
	if err := s.flush(lastCarry); err != nil {
		return err
	}
	s.hook("carried")
	segs := make(map[uint32]bool)
	err := s.view(func(tx *bolt.Tx) error {
		ri := recordsOf(tx)
		for _, x := range j.drop {
			pos, ok, err := ri.get(x)
			if err != nil {
				return err
			}
			if ok {
				segs[pos.Seg] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.sealSegments(segs); err != nil {
		return err
	}
	drop := make(map[uint64]bool, len(j.drop))
	for _, x := range j.drop {
		drop[x] = true
	}
	for _, seg := range slices.Sorted(maps.Keys(segs)) {
		if err := s.compactSegment(seg, j.drop, drop); err != nil {
			return err
		}
		s.hook("compacted")
	}
	s.cache.evict(j.drop)
	// Record-space values were also in the index, whose free pages keep them; events never are.
	if j.erasure() {
		if err := s.vacuumIndex(); err != nil {
			return err
		}
		s.hook("vacuumed")
	}
	return s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketJobs).Delete(u64Key(j.lsn)) })
}

// carry re-appends what record x still holds (other streams' current events, current
// record-space values and deletion markers) as a record with x's precedence. It returns the
// carry's lsn, or 0 when nothing in x is current any more.
func (s *Store) carry(x uint64) (uint64, error) {
	r, err := s.loadRecord(x)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	c := &record{eff: r.eff}
	var ordinal uint32
	for gi := range r.groups {
		g := &r.groups[gi]
		es, err := s.entries(g.stream, g.first, g.first+uint64(len(g.events))-1)
		if err != nil {
			return 0, err
		}
		// Consecutive current events stay one group, so the carry keeps their order.
		var cur *recGroup
		for i := range g.events {
			if es[i].holder != x || es[i].ordinal != ordinal+uint32(i) {
				cur = nil
				continue
			}
			if cur == nil {
				c.groups = append(c.groups, recGroup{stream: g.stream, first: g.first + uint64(i)})
				cur = &c.groups[len(c.groups)-1]
			}
			cur.events = append(cur.events, g.events[i])
		}
		ordinal += uint32(len(g.events))
	}
	for _, p := range r.puts {
		if e, ok := s.spaceHolder(p.Space, p.Key); ok && e.holder == x {
			c.puts = append(c.puts, p)
		}
	}
	for _, d := range r.deletes {
		if e, ok := s.spaceHolder(d.Space, d.Key); ok && e.holder == x {
			c.deletes = append(c.deletes, d)
		}
	}
	if len(c.groups) == 0 && len(c.puts) == 0 && len(c.deletes) == 0 {
		return 0, nil
	}
	p := &prepared{rec: c}
	p.encode()
	// A job carries its records one after another and waits for the index only once they are
	// all written (runJob): a rewrite of a stream spread over many records would otherwise pile
	// its carries up in the overlay without bound.
	if err := s.awaitIndexRoom(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if err := s.failure(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	pending := s.writeLocked(p, nil)
	s.mu.Unlock()
	if err := s.await(pending); err != nil {
		return 0, err
	}
	return c.lsn, nil
}

// spaceHolder returns the current version of a record-space key, live or deleted.
func (s *Store) spaceHolder(space, key string) (spaceEntry, bool) {
	k := spaceKeyString(space, key)
	oe, inOverlay := s.ov.spaceEntry(k)
	be, inBolt := s.boltSpace(k)
	if inOverlay && (!inBolt || oe.holder >= be.holder) {
		return oe, true
	}
	return be, inBolt
}

// sealSegments rotates the log if the active segment is among segs, and then waits until every
// record written before the rotation is in bbolt, so that no position in a segment about to be
// compacted is held only in memory.
func (s *Store) sealSegments(segs map[uint32]bool) error {
	rotate := false
	for _, si := range s.wal.Segments() {
		if segs[si.Seg] && !si.Sealed {
			rotate = true
		}
	}
	if rotate {
		if err := s.wal.Rotate(); err != nil {
			s.fail(err)
			return err
		}
	}
	s.mu.Lock()
	last := s.mu.lsn
	s.mu.Unlock()
	return s.flush(last)
}

// compactSegment drops the records in drop from one segment. The intent is stored in the index
// first, so that a crash between the log's rename and the index update is repaired at open.
func (s *Store) compactSegment(seg uint32, dropList []uint64, drop map[uint64]bool) error {
	segKey := binary.BigEndian.AppendUint32(nil, seg)
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCompacting).Put(segKey, marshalLSNs(nil, dropList))
	}); err != nil {
		return err
	}
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.compactions++
	lsnAt := make(map[wal.Pos]uint64)
	moved := make(map[uint64]wal.Pos)
	var keepErr error
	err := s.wal.Compact(seg, func(pos wal.Pos, kind uint8, payload []byte) bool {
		lsn, err := recordLSN(payload)
		if err != nil {
			keepErr = err
			return true
		}
		lsnAt[pos] = lsn
		return !drop[lsn]
	}, func(old, new wal.Pos) {
		if l, ok := lsnAt[old]; ok {
			moved[l] = new
		}
	})
	if err == nil {
		err = keepErr
	}
	if err != nil {
		return fmt.Errorf("compact segment %d: %w", seg, err)
	}
	return s.update(func(tx *bolt.Tx) error {
		ri := recordsOf(tx)
		for l, pos := range moved {
			if err := ri.put(l, pos); err != nil {
				return err
			}
		}
		for l := range drop {
			if _, kept := moved[l]; kept {
				continue
			}
			pos, ok, err := ri.get(l)
			if err != nil {
				return err
			}
			if ok && pos.Seg == seg {
				if err := ri.remove(l); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketCompacting).Delete(segKey)
	})
}
