package storage

import (
	"sync"

	"github.com/j17-go/j17/wal"
)

// overlay holds what is durable in the log but not yet in bbolt, so that reads see a commit as
// soon as Commit returns while the index is written in batches behind it.
//
// A reader copies what it needs from the overlay first and reads bbolt second; for each key it
// keeps the version written by the larger lsn. The indexer removes an overlay version only after
// the bbolt transaction holding it committed, so a reader never misses a version: it finds it in
// its overlay copy or in bbolt, and possibly in both.
type overlay struct {
	mu      sync.RWMutex
	streams map[StreamKey]*ovStream // protected by mu
	records window[wal.Pos]         // protected by mu; by lsn
	space   map[string]spaceEntry   // protected by mu; keyed by spaceKeyString
	// keyScratch builds the space keys trimLocked looks up; protected by mu.
	keyScratch []byte

	// qmu guards queue: published records the indexer has not taken. It is separate from mu so
	// that taking a batch does not wait for readers or publishers.
	qmu   sync.Mutex
	queue []*applied // protected by qmu
}

type ovStream struct {
	head   head          // valid when head.lsn != 0
	events window[entry] // by event index
}

// applied is a durable record on its way into the index.
type applied struct {
	rec     *record
	pos     wal.Pos
	heads   []headUpdate // stream heads after this record, from the commit path
	pending *wal.Pending
	done    chan struct{} // closed once published (or failed)
	err     error         // set before done is closed
}

type headUpdate struct {
	key  StreamKey
	head head
}

func newOverlay() *overlay {
	return &overlay{
		streams: make(map[StreamKey]*ovStream),
		space:   make(map[string]spaceEntry),
	}
}

func (o *overlay) stream(k StreamKey) *ovStream {
	s := o.streams[k]
	if s == nil {
		s = &ovStream{}
		o.streams[k] = s
	}
	return s
}

// applyLocked adds one durable record. Ordinary records (eff == lsn) are newer than anything in
// the index, so they apply unconditionally; a carry record is compared with the current version,
// which older may be in bbolt only, through the lookup functions.
// REQUIRES: o.mu held for writing.
func (o *overlay) applyLocked(a *applied, olderEntry func(StreamKey, uint64) (entry, bool), olderSpace func(string) (spaceEntry, bool)) {
	r := a.rec
	carry := r.eff != r.lsn
	o.records.set(r.lsn, a.pos)
	var ordinal uint32
	for gi := range r.groups {
		g := &r.groups[gi]
		st := o.stream(g.stream)
		for i := range g.events {
			ev := &g.events[i]
			idx := g.first + uint64(i)
			if carry {
				cur, ok := st.events.get(idx)
				if !ok {
					cur, ok = olderEntry(g.stream, idx)
				}
				if ok && cur.eff > r.eff {
					continue
				}
			}
			st.events.set(idx, entry{holder: r.lsn, eff: r.eff, ordinal: ordinal + uint32(i), sid: ev.sid, ts: ev.ts, hash: ev.hash})
		}
		ordinal += uint32(len(g.events))
	}
	for _, h := range a.heads {
		o.stream(h.key).head = h.head
	}
	setSpace := func(space, key string, live bool, value []byte) {
		k := spaceKeyString(space, key)
		if carry {
			cur, ok := o.space[k]
			if !ok {
				cur, ok = olderSpace(k)
			}
			if ok && cur.eff > r.eff {
				return
			}
		}
		o.space[k] = spaceEntry{live: live, eff: r.eff, holder: r.lsn, value: value}
	}
	for _, p := range r.puts {
		setSpace(p.Space, p.Key, true, p.Value)
	}
	for _, d := range r.deletes {
		setSpace(d.Space, d.Key, false, nil)
	}
	o.qmu.Lock()
	o.queue = append(o.queue, a)
	o.qmu.Unlock()
}

// trimLocked drops the versions that a now-indexed record set, unless a later record replaced
// them. REQUIRES: o.mu held for writing.
func (o *overlay) trimLocked(a *applied) {
	r := a.rec
	o.records.remove(r.lsn)
	drop := func(k StreamKey, st *ovStream) {
		if st.head.lsn == 0 && st.events.empty() {
			delete(o.streams, k)
		}
	}
	laterVersion := func(e entry) bool { return e.holder != r.lsn }
	for gi := range r.groups {
		g := &r.groups[gi]
		st := o.streams[g.stream]
		if st == nil {
			continue
		}
		for i := range g.events {
			st.events.removeIf(g.first+uint64(i), laterVersion)
		}
		drop(g.stream, st)
	}
	for _, h := range a.heads {
		if st := o.streams[h.key]; st != nil {
			if st.head.lsn == r.lsn {
				st.head = head{}
			}
			drop(h.key, st)
		}
	}
	for _, p := range r.puts {
		o.trimSpaceLocked(p.Space, p.Key, r.lsn)
	}
	for _, d := range r.deletes {
		o.trimSpaceLocked(d.Space, d.Key, r.lsn)
	}
}

// trimSpaceLocked drops the version of a space key that the record lsn set, unless a later record
// replaced it. The key is built in a scratch buffer: looking it up and deleting it by the
// buffer's bytes allocates nothing. REQUIRES: o.mu held for writing.
func (o *overlay) trimSpaceLocked(space, key string, lsn uint64) {
	o.keyScratch = appendSpaceKey(o.keyScratch[:0], space, key)
	if e, ok := o.space[string(o.keyScratch)]; ok && e.holder == lsn {
		delete(o.space, string(o.keyScratch))
	}
}
