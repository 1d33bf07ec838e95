package storage

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/j17-go/j17/wal"
)

// prepared is a record encoded outside the commit lock, with what the lock still has to fill in.
type prepared struct {
	rec      *record
	payload  []byte
	offs     recordOffsets
	contents [][32]byte   // content hash of each event, in record order
	expects  []Expect     // per group
	heads    []headUpdate // room for assignLocked's head updates, one per group
	relied   []liveKey    // the keys of the IfAbsent puts dropped because they were live
	preset   bool         // import: stream ids are given and hashes must match
	applied  applied      // the record's way to the publisher and the index
}

// singleEvent is the working set of a commit of one event to one stream, the common case, in one
// allocation, which the overlay keeps until the index has the record.
type singleEvent struct {
	p       prepared
	content [1][32]byte
	expect  [1]Expect
	head    [1]headUpdate
	offs    [5]int // groups, events, hashes, and two ordered puts (an actor's and a target's)

	r         record
	group     [1]recGroup
	event     [1]recEvent
	put       [2]Put // an actor's reference and a target's
	spaceKeys [2]string
}

func newSingleEvent() *prepared {
	b := &singleEvent{}
	b.p.rec = &b.r
	b.r.groups = b.group[:]
	b.group[0].events = b.event[:]
	b.r.puts, b.r.spaceKeys = b.put[:0], b.spaceKeys[:0]
	b.p.contents = b.content[:0]
	b.p.expects = b.expect[:]
	b.p.heads = b.head[:0]
	b.p.offs = recordOffsets{groups: b.offs[0:0:1], events: b.offs[1:1:2], hashes: b.offs[2:2:3], puts: b.offs[3:3:5]}
	return &b.p
}

// Commit writes rec as one log record: every append and record-space change in it, or none. It
// checks every expectation against the streams' current lengths, including commits that are not
// durable yet, assigns stream ids, extends the hash chains and returns once the record is
// durable and visible to reads. A failed expectation writes nothing and returns a *ConflictError
// once the commits it failed against are durable and visible too.
func (s *Store) Commit(rec *Record) (CommitResult, error) {
	in, relied := s.dropLivePuts(rec)
	p, err := prepare(in)
	if err != nil {
		return CommitResult{}, err
	}
	p.relied = relied
	res, err := s.commitPrepared(p)
	if err == errLiveChanged {
		// A delete came in between: commit every put.
		if p, err = prepare(rec); err != nil {
			return CommitResult{}, err
		}
		return s.commitPrepared(p)
	}
	return res, err
}

// errLiveChanged tells Commit that a key whose IfAbsent put it dropped is no longer known live.
var errLiveChanged = errors.New("storage: dropped put no longer live")

// dropLivePuts returns rec without the IfAbsent puts whose keys are known live, and those keys.
// rec itself is not changed. A record left with nothing to write keeps its puts: its commit is
// what makes them durable before Commit returns.
func (s *Store) dropLivePuts(rec *Record) (*Record, []liveKey) {
	ifAbsent := 0
	for i := range rec.Puts {
		if rec.Puts[i].IfAbsent {
			ifAbsent++
		}
	}
	if ifAbsent == 0 {
		return rec, nil
	}
	var relied []liveKey
	var kept []Put
	s.live.RLock()
	for i := range rec.Puts {
		p := &rec.Puts[i]
		if p.IfAbsent && s.live.has(liveKeyOf(p, false)) {
			if kept == nil {
				kept = append(make([]Put, 0, len(rec.Puts)-1), rec.Puts[:i]...)
				// A record's references are usually all live already, or none is.
				relied = make([]liveKey, 0, ifAbsent)
			}
			relied = append(relied, liveKeyOf(p, false))
			continue
		}
		if kept != nil {
			kept = append(kept, *p)
		}
	}
	s.live.RUnlock()
	if relied == nil || len(rec.Appends) == 0 && len(kept) == 0 && len(rec.Deletes) == 0 {
		return rec, nil
	}
	out := *rec
	out.Puts = kept
	return &out, relied
}

// stillLiveLocked reports whether every key a commit relied on is still known live: the
// records that made them live are then in the log before the commit's own. REQUIRES: s.mu held.
func (s *Store) stillLiveLocked(keys []liveKey) bool {
	for _, k := range keys {
		if !s.live.has(k) {
			return false
		}
	}
	return true
}

func validSpace(space string) bool { return space != "" && !strings.ContainsRune(space, 0) }

// prepare validates rec and does the per-event work that needs no lock: canonicalizing data and
// metadata, content hashing and encoding.
func prepare(in *Record) (*prepared, error) {
	if len(in.Appends) == 0 && len(in.Puts) == 0 && len(in.Deletes) == 0 {
		return nil, fmt.Errorf("%w: empty record", ErrInvalid)
	}
	nEvents := 0
	for _, a := range in.Appends {
		nEvents += len(a.Events)
	}
	var p *prepared
	if len(in.Appends) == 1 && nEvents == 1 {
		p = newSingleEvent()
	} else {
		p = &prepared{rec: &record{}}
		p.rec.groups = make([]recGroup, len(in.Appends))
		p.expects = make([]Expect, len(in.Appends))
		p.contents = make([][32]byte, 0, nEvents)
		p.heads = make([]headUpdate, 0, len(in.Appends))
		// The groups share one array of events: a record with implied events has many groups.
		events := make([]recEvent, nEvents)
		for i := range in.Appends {
			n := len(in.Appends[i].Events)
			p.rec.groups[i].events, events = events[:n:n], events[n:]
		}
	}
	r := p.rec
	// Events often share one metadata slice (every event a trigger implies carries the same
	// metadata): the same bytes are checked once.
	var metaIn, metaOut []byte
	for i := range in.Appends {
		a := &in.Appends[i]
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
		for j := range a.Events {
			ne := &a.Events[j]
			if ne.Type == "" {
				return nil, fmt.Errorf("%w: event %d of %s has no type", ErrInvalid, j, a.Stream)
			}
			data, err := canonicalOrNull(ne.Data)
			if err != nil {
				return nil, fmt.Errorf("%w: event %d of %s: data: %w", ErrInvalid, j, a.Stream, err)
			}
			meta := metaOut
			if !sameBytes(ne.Metadata, metaIn) {
				if meta, err = canonicalOrNull(ne.Metadata); err != nil {
					return nil, fmt.Errorf("%w: event %d of %s: metadata: %w", ErrInvalid, j, a.Stream, err)
				}
				metaIn, metaOut = ne.Metadata, meta
			}
			g.events[j] = recEvent{ts: ne.Timestamp, typ: ne.Type, data: data, meta: meta}
			p.contents = append(p.contents, ContentHash(a.Stream, ne.Type, data, meta))
		}
	}
	if n := len(in.Puts); n > cap(r.puts) {
		r.puts, r.spaceKeys = make([]Put, 0, n), make([]string, 0, n)
	}
	for _, pt := range in.Puts {
		if !validSpace(pt.Space) {
			return nil, fmt.Errorf("%w: record space %q", ErrInvalid, pt.Space)
		}
		spaceKey := spaceKeyString(pt.Space, pt.Key)
		if pt.Stream != (StreamKey{}) {
			if !slices.ContainsFunc(in.Appends, func(a Append) bool { return a.Stream == pt.Stream }) {
				return nil, fmt.Errorf("%w: put of %q ordered by %s, which the record does not append to", ErrInvalid, pt.Key, pt.Stream)
			}
			// The digits are filled in under the commit lock (assignLocked).
			spaceKey = pt.Space + "\x00" + pt.Key + "0000000000000000\x00" + pt.Stream.ID
		}
		r.spaceKeys = append(r.spaceKeys, spaceKey)
		r.puts = append(r.puts, Put{Space: pt.Space, Key: spaceKey[len(pt.Space)+1:], Value: append([]byte{}, pt.Value...), IfAbsent: pt.IfAbsent, Stream: pt.Stream})
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

// sameBytes reports whether a and b are the same non-empty memory, not merely equal bytes.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// encode writes the payload and points the record's data and metadata into it, so that the
// record (which the overlay keeps until the index has it) never holds the caller's buffers.
func (p *prepared) encode() {
	n := p.rec.eventCount()
	if cap(p.offs.groups) < len(p.rec.groups) || cap(p.offs.events) < n || cap(p.offs.hashes) < n {
		p.offs = recordOffsets{groups: make([]int, 0, len(p.rec.groups)), events: make([]int, 0, n), hashes: make([]int, 0, n)}
	}
	p.offs.groups, p.offs.events, p.offs.hashes, p.offs.puts = p.offs.groups[:0], p.offs.events[:0], p.offs.hashes[:0], p.offs.puts[:0]
	p.payload = p.rec.marshal(make([]byte, 0, p.rec.encodedSize()), &p.offs)
	p.rec.size = cap(p.payload)
	ord := 0
	for gi := range p.rec.groups {
		evs := p.rec.groups[gi].events
		for i := range evs {
			e := &evs[i]
			metaEnd := p.offs.hashes[ord]
			metaStart := metaEnd - len(e.meta)
			dataEnd := metaStart - uvarintLen(uint64(len(e.meta)))
			e.data = p.payload[dataEnd-len(e.data) : dataEnd : dataEnd]
			e.meta = p.payload[metaStart:metaEnd:metaEnd]
			ord++
		}
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
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
	if err := s.awaitIndexRoom(); err != nil {
		return CommitResult{}, err
	}
	// Hashed here, the streams cost the commit lock nothing.
	for i := range p.rec.groups {
		g := &p.rec.groups[i]
		g.hash = s.known.hashKey(g.stream)
	}
	s.known.touch(p.rec.groups)
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return CommitResult{}, err
	}
	if !s.stillLiveLocked(p.relied) {
		s.mu.Unlock()
		return CommitResult{}, errLiveChanged
	}
	res, heads, err := s.assignLocked(p)
	if err != nil {
		s.mu.Unlock()
		if c, ok := err.(*ConflictError); ok {
			err = s.visibleConflict(c)
		}
		return CommitResult{}, err
	}
	pending := s.writeLocked(p, heads)
	s.mu.Unlock()
	if err := s.await(pending); err != nil {
		return CommitResult{}, err
	}
	return res, nil
}

// usableLocked returns why the store takes no more commits, if it does not. REQUIRES: s.mu held.
func (s *Store) usableLocked() error {
	if s.mu.closed {
		return ErrClosed
	}
	return s.failure()
}

// assignLocked checks expectations and fills in indexes, stream ids and chain hashes. It changes
// no store state, so a conflict leaves nothing behind. REQUIRES: s.mu held.
func (s *Store) assignLocked(p *prepared) (CommitResult, []headUpdate, error) {
	r := p.rec
	heads := p.heads[:0]
	find := func(k StreamKey, hash uint64) (*headUpdate, error) {
		for i := range heads {
			if heads[i].hash == hash && heads[i].key == k {
				return &heads[i], nil
			}
		}
		h, view, err := s.headLocked(k, hash)
		if err != nil {
			return nil, err
		}
		// No head anywhere (commit view or index): no earlier record touched the stream, so
		// the indexer need not look for one.
		heads = append(heads, headUpdate{key: k, hash: hash, head: h, view: view, fresh: h.lsn == 0 && h.no == 0})
		return &heads[len(heads)-1], nil
	}
	res := CommitResult{Lengths: make([]uint64, len(r.groups)), StreamIDs: make([]StreamID, 0, len(p.contents))}
	sids := sidGen{clock: s.clock, last: s.mu.lastSID}
	if len(r.groups) > 1 {
		s.mu.touched = s.mu.heads.touch(r.groups)
	}
	ord := 0
	for gi := range r.groups {
		g := &r.groups[gi]
		u, err := find(g.stream, g.hash)
		if err != nil {
			return CommitResult{}, nil, err
		}
		h := &u.head
		g.fresh = u.fresh
		if ex := p.expects[gi]; ex.Kind != Skip && ex.Length != h.Length {
			return CommitResult{}, nil, &ConflictError{Stream: g.stream, Kind: ex.Kind, Expected: ex.Length, Actual: h.Length, lsn: h.lsn}
		}
		g.first = h.Length + 1
		binary.LittleEndian.PutUint64(p.payload[p.offs.groups[gi]:], g.first)
		for i := range g.events {
			ev := &g.events[i]
			if p.preset {
				if !h.LastStreamID.Less(ev.sid) {
					return CommitResult{}, nil, fmt.Errorf("%w: stream id %s of %s does not follow %s", ErrInvalid, ev.sid, g.stream, h.LastStreamID)
				}
				if sids.last.Less(ev.sid) {
					sids.last = ev.sid
				}
				want := ev.hash
				ev.hash = chainNext(h.LastHash, p.contents[ord])
				if ev.hash != want {
					return CommitResult{}, nil, fmt.Errorf("%w: %s event %d", ErrChainMismatch, g.stream, g.first+uint64(i))
				}
			} else {
				ev.sid = sids.next()
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
	ordered := 0
	for i := range r.puts {
		pt := &r.puts[i]
		if pt.Stream == (StreamKey{}) {
			continue
		}
		// The stream is one the record appends to (prepare checks), so its head is in heads.
		u, err := find(pt.Stream, s.known.hashKey(pt.Stream))
		if err != nil {
			return CommitResult{}, nil, err
		}
		h := &u.head
		digits := p.payload[p.offs.puts[ordered] : p.offs.puts[ordered]+16]
		hex.Encode(digits, binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(h.FirstTimestamp)))
		spaceKey := r.spaceKeys[i]
		at := len(spaceKey) - len(pt.Stream.ID) - orderedKeyTail
		spaceKey = spaceKey[:at] + string(digits) + spaceKey[at+16:]
		r.spaceKeys[i], pt.Key = spaceKey, spaceKey[len(pt.Space)+1:]
		ordered++
	}
	s.mu.lastSID = sids.last
	return res, heads, nil
}

// sidGen makes stream ids after last: the current millisecond with sequence 0, or, when the
// clock has not moved past the last id (or stepped back), the last id's millisecond with the next
// sequence. Ids therefore strictly increase whatever the clock does. The clock is read once.
type sidGen struct {
	clock func() time.Time
	last  StreamID
	now   uint64
}

func (g *sidGen) next() StreamID {
	if g.now == 0 {
		if ms := g.clock().UnixMilli(); ms > 0 {
			g.now = uint64(ms)
		}
	}
	if g.now > g.last.Ms {
		g.last = StreamID{Ms: g.now}
	} else {
		g.last.Seq++
	}
	return g.last
}

// headLocked returns the commit view of a stream's head, loading it from the index on first use,
// and the view's entry for it. A stream with records in flight always has its head in the view,
// so the durable view is exact for any stream that is not. A stream the filter of known streams
// has never seen has no head anywhere: its empty head is not put in the view (no entry), which
// writeLocked does if the commit goes through. REQUIRES: s.mu held.
func (s *Store) headLocked(k StreamKey, hash uint64) (head, *commitHead, error) {
	if ch, ok := s.mu.heads.get(k, hash); ok {
		return ch.head, ch, nil
	}
	if !s.known.mayHave(hash) {
		return head{}, nil, nil
	}
	h, err := s.durableHead(k)
	if err != nil {
		return head{}, nil, err
	}
	return h, s.mu.heads.add(k, hash, h), nil
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
	s.noteLiveLocked(r, p.relied)
	for i := range heads {
		if heads[i].fresh {
			s.known.addHashes(heads[i].hash)
		}
	}
	// Every entry headLocked returned is still in the view: only prune forgets heads, and it
	// runs below, once the record's heads are the most recently written. The heads go on with
	// the record to the overlay, without the entries, which the view alone keeps alive.
	for i := range heads {
		u := &heads[i]
		u.head.lsn = r.lsn
		if u.view != nil {
			s.mu.heads.written(u.view, u.head)
			u.view = nil
		} else {
			s.mu.heads.add(u.key, u.hash, u.head)
		}
	}
	// A few heads forgotten for each head written keep the view at its bound, whether its
	// heads were added here or by headLocked (found in the index).
	for range heads {
		s.mu.heads.prune(s.visible.Load())
	}
	// A record is alone when none is in flight ahead of it and the last group published held
	// one record: its committer flushes and publishes it itself (await), as the log's flusher and
	// the publisher would, without waking either. Under concurrent commits it wakes them as
	// before. The last group's size tells a lone writer from concurrent ones that happen to find
	// the pipeline empty: with 16 connections over HTTP the records in flight drain between
	// cohorts, and a first record flushed at once, alone, made the rest of its cohort wait for
	// that fsync (16 and 64 connections lost a sixth of their rate).
	s.qmu.Lock()
	alone := len(s.inflight) == 0 && s.lastGroup <= 1
	s.qmu.Unlock()
	var pending *wal.Pending
	if alone {
		pending = s.wal.WriteDeferred(kindRecord, p.payload)
	} else {
		pending = s.wal.Write(kindRecord, p.payload)
	}
	a := &p.applied
	*a = applied{rec: r, pos: pending.Pos(), heads: heads, pending: pending, done: wakePool.Get().(chan struct{}), alone: alone}
	s.active.Add(1)
	s.qmu.Lock()
	s.inflight = append(s.inflight, a)
	s.qmu.Unlock()
	if !alone {
		select {
		case s.pubSignal <- struct{}{}:
		default:
		}
	}
	return a
}

// noteLiveLocked records what r does to the keys of Store.live: its IfAbsent puts make keys live
// and its deletes, which win over its puts as in the index, make them not; the keys its commit
// relied on move to the current generation. REQUIRES: s.mu held.
func (s *Store) noteLiveLocked(r *record, relied []liveKey) {
	adds := slices.ContainsFunc(r.puts, func(p Put) bool { return p.IfAbsent })
	// Only holders of s.mu change the set, so it may be read here without its lock.
	stale := slices.ContainsFunc(relied, func(k liveKey) bool { return !s.live.cur.has(k) })
	if !adds && !stale && (len(r.deletes) == 0 || s.live.len() == 0) {
		return
	}
	s.live.Lock()
	defer s.live.Unlock()
	if stale {
		for _, k := range relied {
			s.live.add(k)
		}
	}
	for i := range r.puts {
		if p := &r.puts[i]; p.IfAbsent && !freshStream(r, p.Stream, i) {
			s.live.add(liveKeyOf(p, true))
		}
	}
	for _, d := range r.deletes {
		s.live.remove(d.Space, d.Key)
	}
}

// freshStream reports whether k is a stream that r starts. Store.live leaves out the keys of
// puts ordered by such a stream: most new streams are written once (an order's inventory
// streams, say), and remembering their keys filled the set with keys never put again, its maps
// growing past the processor's caches (its lookups went from 1% to 3% of the server's processor
// under orders to new streams). A stream written again puts its keys again once, and from then on
// they are known. A record's references usually follow its appends one for one
// (tombstone.AppendRefPuts), so group hint, the put's place, is tried first: this runs under the
// commit lock, and an order's eleven puts would otherwise each search its eleven groups.
func freshStream(r *record, k StreamKey, hint int) bool {
	if k == (StreamKey{}) {
		return false
	}
	if hint < len(r.groups) && r.groups[hint].stream == k {
		return r.groups[hint].fresh
	}
	for gi := range r.groups {
		if r.groups[gi].stream == k {
			return r.groups[gi].fresh
		}
	}
	return false
}

// await waits until the record is durable and visible, or the store failed. The committer of a
// record that was alone writes its log group itself (writeLocked), which publishes it as the fsync
// returns, unless the flusher (woken by a later commit) or the publisher got there first; its own
// publishDurable then finds nothing left, or answers a failed log with its error. Either way the
// record is published exactly once, under pubMu.
func (s *Store) await(a *applied) error {
	if a.alone {
		a.pending.Flush()
		s.publishDurable(a.pending.Wait())
	}
	<-a.done
	wakePool.Put(a.done)
	return a.err
}

// wakePool recycles the channels committers wait on; publishDurable sends on each exactly once.
var wakePool = sync.Pool{New: func() any { return make(chan struct{}, 1) }}
