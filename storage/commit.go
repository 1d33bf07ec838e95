package storage

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/j17-go/j17/wal"
)

// prepared is a record encoded outside the commit lock, with what the lock still has to fill in.
type prepared struct {
	rec      *record
	payload  []byte
	offs     recordOffsets
	contents [][32]byte // content hash of each event, in record order
	expects  []Expect   // per group
	preset   bool       // import: stream ids are given and hashes must match
}

// Commit writes rec as one log record: every append and record-space change in it, or none. It
// checks every expectation against the streams' current lengths, including commits that are not
// durable yet, assigns stream ids, extends the hash chains and returns once the record is
// durable and visible to reads. A failed expectation returns a *ConflictError and writes nothing.
func (s *Store) Commit(rec *Record) (CommitResult, error) {
	p, err := prepare(rec)
	if err != nil {
		return CommitResult{}, err
	}
	return s.commitPrepared(p)
}

func validSpace(space string) bool { return space != "" && !strings.ContainsRune(space, 0) }

// prepare validates rec and does the per-event work that needs no lock: canonicalizing data and
// metadata, content hashing and encoding.
func prepare(in *Record) (*prepared, error) {
	if len(in.Appends) == 0 && len(in.Puts) == 0 && len(in.Deletes) == 0 {
		return nil, fmt.Errorf("%w: empty record", ErrInvalid)
	}
	p := &prepared{rec: &record{}}
	r := p.rec
	r.groups = make([]recGroup, len(in.Appends))
	p.expects = make([]Expect, len(in.Appends))
	nEvents := 0
	for _, a := range in.Appends {
		nEvents += len(a.Events)
	}
	p.contents = make([][32]byte, 0, nEvents)
	for i, a := range in.Appends {
		if !a.Stream.valid() {
			return nil, fmt.Errorf("%w: stream key %q", ErrInvalid, a.Stream.String())
		}
		if len(a.Events) == 0 {
			return nil, fmt.Errorf("%w: append to %s without events", ErrInvalid, a.Stream)
		}
		if a.Expect.Kind > Skip {
			return nil, fmt.Errorf("%w: expectation kind %d", ErrInvalid, a.Expect.Kind)
		}
		p.expects[i] = a.Expect
		g := &r.groups[i]
		g.stream = a.Stream
		g.events = make([]recEvent, len(a.Events))
		for j, ne := range a.Events {
			if ne.Type == "" {
				return nil, fmt.Errorf("%w: event %d of %s has no type", ErrInvalid, j, a.Stream)
			}
			data, err := canonicalOrNull(ne.Data)
			if err != nil {
				return nil, fmt.Errorf("%w: event %d of %s: data: %w", ErrInvalid, j, a.Stream, err)
			}
			meta, err := canonicalOrNull(ne.Metadata)
			if err != nil {
				return nil, fmt.Errorf("%w: event %d of %s: metadata: %w", ErrInvalid, j, a.Stream, err)
			}
			g.events[j] = recEvent{ts: ne.Timestamp, typ: ne.Type, data: data, meta: meta}
			p.contents = append(p.contents, ContentHash(a.Stream, ne.Type, data, meta))
		}
	}
	for _, pt := range in.Puts {
		if !validSpace(pt.Space) {
			return nil, fmt.Errorf("%w: record space %q", ErrInvalid, pt.Space)
		}
		r.puts = append(r.puts, Put{Space: pt.Space, Key: pt.Key, Value: append([]byte{}, pt.Value...)})
	}
	for _, d := range in.Deletes {
		if !validSpace(d.Space) {
			return nil, fmt.Errorf("%w: record space %q", ErrInvalid, d.Space)
		}
		r.deletes = append(r.deletes, d)
	}
	p.encode()
	return p, nil
}

func (p *prepared) encode() {
	n := 0
	for _, g := range p.rec.groups {
		n += len(g.events)
	}
	p.offs = recordOffsets{groups: make([]int, 0, len(p.rec.groups)), events: make([]int, 0, n), hashes: make([]int, 0, n)}
	p.payload = p.rec.marshal(make([]byte, 0, p.rec.encodedSize()), &p.offs)
	p.rec.size = len(p.payload)
}

// checkSize refuses a record the log would refuse: a refused Write must never reach the
// publisher, which takes every position below the durable end as durable.
func (p *prepared) checkSize() error {
	if len(p.payload) > wal.MaxPayload {
		return fmt.Errorf("%w: record of %d bytes, the limit is %d", ErrInvalid, len(p.payload), wal.MaxPayload)
	}
	return nil
}

// commitPrepared runs the locked part of a commit, then waits for durability outside the lock.
func (s *Store) commitPrepared(p *prepared) (CommitResult, error) {
	if err := p.checkSize(); err != nil {
		return CommitResult{}, err
	}
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return CommitResult{}, ErrClosed
	}
	if err := s.failure(); err != nil {
		s.mu.Unlock()
		return CommitResult{}, err
	}
	res, heads, err := s.assignLocked(p)
	if err != nil {
		s.mu.Unlock()
		return CommitResult{}, err
	}
	pending := s.writeLocked(p, heads)
	s.mu.Unlock()
	if err := s.await(pending); err != nil {
		return CommitResult{}, err
	}
	return res, nil
}

// assignLocked checks expectations and fills in indexes, stream ids and chain hashes. It changes
// no store state, so a conflict leaves nothing behind. REQUIRES: s.mu held.
func (s *Store) assignLocked(p *prepared) (CommitResult, []headUpdate, error) {
	r := p.rec
	heads := make([]headUpdate, 0, len(r.groups))
	find := func(k StreamKey) *head {
		for i := range heads {
			if heads[i].key == k {
				return &heads[i].head
			}
		}
		heads = append(heads, headUpdate{key: k, head: s.headLocked(k)})
		return &heads[len(heads)-1].head
	}
	res := CommitResult{Lengths: make([]uint64, len(r.groups))}
	lastSID := s.mu.lastSID
	next := s.nextSIDFunc(&lastSID)
	ord := 0
	for gi := range r.groups {
		g := &r.groups[gi]
		h := find(g.stream)
		if ex := p.expects[gi]; ex.Kind != Skip && ex.Length != h.Length {
			return CommitResult{}, nil, &ConflictError{Stream: g.stream, Kind: ex.Kind, Expected: ex.Length, Actual: h.Length}
		}
		g.first = h.Length + 1
		binary.LittleEndian.PutUint64(p.payload[p.offs.groups[gi]:], g.first)
		for i := range g.events {
			ev := &g.events[i]
			if p.preset {
				if !h.LastStreamID.Less(ev.sid) {
					return CommitResult{}, nil, fmt.Errorf("%w: stream id %s of %s does not follow %s", ErrInvalid, ev.sid, g.stream, h.LastStreamID)
				}
				if lastSID.Less(ev.sid) {
					lastSID = ev.sid
				}
				want := ev.hash
				ev.hash = chainNext(h.LastHash, p.contents[ord])
				if ev.hash != want {
					return CommitResult{}, nil, fmt.Errorf("%w: %s event %d", ErrChainMismatch, g.stream, g.first+uint64(i))
				}
			} else {
				ev.sid = next()
				ev.hash = chainNext(h.LastHash, p.contents[ord])
			}
			o := p.offs.events[ord]
			binary.LittleEndian.PutUint64(p.payload[o:], ev.sid.Ms)
			binary.LittleEndian.PutUint64(p.payload[o+8:], ev.sid.Seq)
			copy(p.payload[p.offs.hashes[ord]:], ev.hash[:])
			if h.Length == 0 {
				h.FirstTimestamp = ev.ts
			}
			h.Length++
			h.LastHash, h.LastTimestamp, h.LastStreamID = ev.hash, ev.ts, ev.sid
			res.StreamIDs = append(res.StreamIDs, ev.sid)
			ord++
		}
		res.Lengths[gi] = h.Length
	}
	s.mu.lastSID = lastSID
	return res, heads, nil
}

// nextSIDFunc returns a generator of stream ids after *last: the current millisecond with
// sequence 0, or, when the clock has not moved past the last id (or stepped back), the last id's
// millisecond with the next sequence. Ids therefore strictly increase whatever the clock does.
func (s *Store) nextSIDFunc(last *StreamID) func() StreamID {
	var now uint64
	return func() StreamID {
		if now == 0 {
			if ms := s.clock().UnixMilli(); ms > 0 {
				now = uint64(ms)
			}
		}
		if now > last.Ms {
			*last = StreamID{Ms: now}
		} else {
			last.Seq++
		}
		return *last
	}
}

// headLocked returns the commit view of a stream's head, loading it from the index on first use.
// A stream with records in flight always has its head in the map, so the durable view is exact
// for any stream that is not. REQUIRES: s.mu held.
func (s *Store) headLocked(k StreamKey) head {
	if h, ok := s.mu.heads[k]; ok {
		return *h
	}
	h, _ := s.durableHead(k)
	if len(s.mu.heads) >= s.mu.pruneAt {
		s.pruneHeadsLocked()
	}
	s.mu.heads[k] = &h
	return h
}

const minPruneAt = 1 << 16

// pruneHeadsLocked forgets the heads whose last record is already in bbolt: for those streams
// the durable view is exact, so headLocked reloads the same head on next use. This bounds the
// commit view by the streams with recent writes; the amortized cost is O(1) per new stream.
// REQUIRES: s.mu held.
func (s *Store) pruneHeadsLocked() {
	indexed := s.indexed.Load()
	for k, h := range s.mu.heads {
		if h.lsn <= indexed {
			delete(s.mu.heads, k)
		}
	}
	s.mu.pruneAt = max(minPruneAt, 2*len(s.mu.heads))
}

// writeLocked assigns the lsn, patches it in and hands the record to the log, which fixes log
// order = lsn order = stream-id order. REQUIRES: s.mu held.
func (s *Store) writeLocked(p *prepared, heads []headUpdate) *applied {
	s.mu.lsn++
	r := p.rec
	r.lsn = s.mu.lsn
	if r.eff == 0 {
		r.eff = r.lsn
	}
	binary.LittleEndian.PutUint64(p.payload[1:], r.lsn)
	binary.LittleEndian.PutUint64(p.payload[9:], r.eff)
	for i := range heads {
		heads[i].head.lsn = r.lsn
		h := heads[i].head
		s.mu.heads[heads[i].key] = &h
	}
	pending := s.wal.Write(kindRecord, p.payload)
	a := &applied{rec: r, pos: pending.Pos(), heads: heads, pending: pending, done: make(chan struct{})}
	s.active.Add(1)
	s.qmu.Lock()
	s.inflight = append(s.inflight, a)
	s.qmu.Unlock()
	select {
	case s.pubSignal <- struct{}{}:
	default:
	}
	return a
}

// await waits until the publisher made the record durable and visible, or failed the store.
func (s *Store) await(a *applied) error {
	<-a.done
	return a.err
}
