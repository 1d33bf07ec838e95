package storage

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/j17-go/j17/wal"
)

// overlay holds what is durable in the log but not yet in bbolt, so that reads see a commit as
// soon as Commit returns while the index is written in batches behind it.
//
// It holds records in generations: the publisher adds each record to the newest one, and the
// indexer writes the oldest ones in one bbolt transaction (one, or more if it is behind), then
// drops them whole. A generation takes no more records once the indexer has taken it or it is full
// (it is sealed), and the next record starts a new one. Dropping a generation forgets its versions
// at once, where removing them record by record, each looked up in maps of every stream and key in
// flight, took about a fifth of the indexer's time.
//
// A reader copies what it needs from the overlay first and reads bbolt second; for each key it
// keeps the version written by the larger lsn. Within the overlay the newest generation that has
// a key holds its newest version (a carry record, whose versions may be older than the current
// ones, sets only those that win over every version in the overlay and in bbolt). The indexer
// drops a generation only after the bbolt transaction holding it committed, so a reader never
// misses a version: it finds it in its overlay copy or in bbolt, and possibly in both.
type overlay struct {
	// hash is knownStreams.hashKey, by which generations keep their streams: the commit path
	// has hashed every stream of a record already (headUpdate.hash), and a reader hashes its
	// stream once, where a map keyed by StreamKey hashed it again in every generation.
	hash func(StreamKey) uint64
	mu   sync.RWMutex
	// gens holds the generations, oldest first; the last one is unsealed unless the indexer
	// just took it. Protected by mu.
	gens []*ovGen
	// held counts the index entries of every generation's records (the sum of their puts):
	// what the overlay holds that bbolt does not yet. Written under mu, read without it: every
	// commit reads it.
	held atomic.Int64
	// touched keeps what ovGen.touch read, so that the compiler cannot drop the reads.
	// Protected by mu.
	touched uint64
}

// ovGen is one generation: records that go into one index transaction together.
type ovGen struct {
	// streams holds the generation's streams by hash, those of one hash chained (ovStream.next).
	streams map[uint64]*ovStream
	records window[wal.Pos] // by lsn
	space   map[string]spaceEntry
	// batch holds the generation's records in lsn order, and puts counts the entries the index
	// transaction will put for them; sealed says it takes no more.
	batch  []*applied
	puts   int
	sealed bool
	// slab hands out the generation's ovStreams, which live exactly as long as it: under writes
	// to new streams, one allocation per stream was 3% of the objects the server allocated.
	slab []ovStream
}

// streamSlab is how many ovStreams a generation allocates at once.
const streamSlab = 256

// full says that g holds as much as one index transaction should.
func (g *ovGen) full() bool { return g.puts >= indexBatch }

type ovStream struct {
	key    StreamKey
	next   *ovStream     // another stream of the same hash
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
	alone   bool          // written alone (writeLocked): its committer flushes and publishes it
}

type headUpdate struct {
	key  StreamKey
	hash uint64 // of key, knownStreams.hashKey
	head head
	// fresh says that no earlier record touched the stream (see recGroup.fresh).
	fresh bool
	// view is the commit view's entry for the stream, from headLocked to writeLocked; nil for
	// a stream no commit wrote before, and once the record is written.
	view *commitHead
}

func newOverlay(hash func(StreamKey) uint64) *overlay { return &overlay{hash: hash} }

// newGen returns a generation whose maps have room for as many streams and keys as prev, the
// generation before it, held: generations under a steady load are alike, and maps grown from
// empty each time rehashed every entry several times over.
func newGen(prev *ovGen) *ovGen {
	var streams, space int
	if prev != nil {
		streams, space = len(prev.streams), len(prev.space)
	}
	return &ovGen{streams: make(map[uint64]*ovStream, streams), space: make(map[string]spaceEntry, space)}
}

// find returns the generation's stream k, whose hash is hash, or nil.
func (g *ovGen) find(k StreamKey, hash uint64) *ovStream {
	for s := g.streams[hash]; s != nil; s = s.next {
		if s.key == k {
			return s
		}
	}
	return nil
}

// touch looks up the stream of each head, reads it and the first byte of its id, and returns a
// sum of what it read, as commitView.touch does for the commit view: the look-ups of a record's
// streams that follow then find them in the processor's caches.
func (g *ovGen) touch(heads []headUpdate) uint64 {
	var sum uint64
	for i := range heads {
		if s := g.streams[heads[i].hash]; s != nil {
			sum += s.head.lsn
			if id := s.key.ID; id != "" {
				sum += uint64(id[0])
			}
		}
	}
	return sum
}

// stream returns the generation's stream k, whose hash is hash, adding it if it has none.
func (g *ovGen) stream(k StreamKey, hash uint64) *ovStream {
	if s := g.find(k, hash); s != nil {
		return s
	}
	if len(g.slab) == cap(g.slab) {
		g.slab = make([]ovStream, 0, streamSlab)
	}
	g.slab = g.slab[:len(g.slab)+1]
	s := &g.slab[len(g.slab)-1]
	s.key, s.next = k, g.streams[hash]
	g.streams[hash] = s
	return s
}

// applyLocked adds one durable record to the newest generation. Ordinary records (eff == lsn)
// are newer than anything in the index, so they apply unconditionally; a carry record is
// compared with the current version, which older may be in bbolt only, through the lookup
// functions. REQUIRES: o.mu held for writing.
func (o *overlay) applyLocked(a *applied, olderEntry func(StreamKey, uint64) (entry, bool), olderSpace func(string) (spaceEntry, bool)) {
	if n := len(o.gens); n == 0 {
		o.gens = append(o.gens, newGen(nil))
	} else if o.gens[n-1].sealed {
		o.gens = append(o.gens, newGen(o.gens[n-1]))
	}
	g := o.gens[len(o.gens)-1]
	r := a.rec
	carry := r.eff != r.lsn
	g.records.set(r.lsn, a.pos)
	if len(a.heads) > 1 {
		o.touched += g.touch(a.heads)
	}
	var ordinal uint32
	// The commit path lists a record's heads in the order of its groups' first appearance, so
	// heads[i] is usually group i's: setting it here spares a second search of the map.
	matched := 0
	for gi := range r.groups {
		rg := &r.groups[gi]
		var st *ovStream
		if matched == gi && gi < len(a.heads) && a.heads[gi].key == rg.stream {
			st = g.stream(rg.stream, a.heads[gi].hash)
			st.head = a.heads[gi].head
			matched++
		} else {
			st = g.stream(rg.stream, o.hash(rg.stream))
		}
		for i := range rg.events {
			ev := &rg.events[i]
			idx := rg.first + uint64(i)
			if carry {
				cur, ok := o.entryLocked(rg.stream, idx)
				if !ok {
					cur, ok = olderEntry(rg.stream, idx)
				}
				if ok && cur.eff > r.eff {
					continue
				}
			}
			st.events.set(idx, entry{holder: r.lsn, eff: r.eff, ordinal: ordinal + uint32(i), sid: ev.sid, ts: ev.ts, hash: ev.hash})
		}
		ordinal += uint32(len(rg.events))
	}
	for _, h := range a.heads[matched:] {
		g.stream(h.key, h.hash).head = h.head
	}
	setSpace := func(k string, live bool, value []byte) {
		if carry {
			cur, ok := o.spaceLocked(k)
			if !ok {
				cur, ok = olderSpace(k)
			}
			if ok && cur.eff > r.eff {
				return
			}
		}
		g.space[k] = spaceEntry{live: live, eff: r.eff, holder: r.lsn, value: value}
	}
	for i, p := range r.puts {
		if len(r.spaceKeys) == len(r.puts) {
			setSpace(r.spaceKeys[i], true, p.Value)
		} else {
			setSpace(spaceKeyString(p.Space, p.Key), true, p.Value)
		}
	}
	for _, d := range r.deletes {
		setSpace(spaceKeyString(d.Space, d.Key), false, nil)
	}
	g.batch = append(g.batch, a)
	n := r.indexEntries()
	g.puts += n
	o.held.Add(int64(n))
	if g.full() {
		g.sealed = true
	}
}

// take seals the oldest generations and returns them to the indexer, oldest first, for one
// transaction: as many as put at most maxEntries index entries together, and at least one. It
// returns nil if the overlay holds no record. The generations stay readable until drop.
func (o *overlay) take(maxEntries int) []*ovGen {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.gens) == 0 || len(o.gens[0].batch) == 0 {
		return nil
	}
	n, entries := 1, o.gens[0].puts
	for n < len(o.gens) && len(o.gens[n].batch) > 0 && entries+o.gens[n].puts <= maxEntries {
		entries += o.gens[n].puts
		n++
	}
	for _, g := range o.gens[:n] {
		g.sealed = true
	}
	return slices.Clone(o.gens[:n])
}

// drop forgets gens, the oldest generations, once bbolt holds their records, and reports whether
// the next one is a full batch already.
func (o *overlay) drop(gens []*ovGen) (fullNext bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, g := range gens {
		if len(o.gens) > 0 && o.gens[0] == g {
			o.gens[0] = nil
			o.gens = o.gens[1:]
			o.held.Add(-int64(g.puts))
		}
	}
	return len(o.gens) > 0 && o.gens[0].full()
}

// crowded says that the overlay holds at least limit index entries.
func (o *overlay) crowded(limit int) bool { return o.held.Load() >= int64(limit) }

// head returns the newest head of k in the overlay; lsn 0 when it has none.
func (o *overlay) head(k StreamKey) head {
	hash := o.hash(k)
	o.mu.RLock()
	defer o.mu.RUnlock()
	for i := len(o.gens) - 1; i >= 0; i-- {
		if st := o.gens[i].find(k, hash); st != nil && st.head.lsn != 0 {
			return st.head
		}
	}
	return head{}
}

// entryLocked returns the newest entry of event idx of k in the overlay. REQUIRES: o.mu held.
func (o *overlay) entryLocked(k StreamKey, idx uint64) (entry, bool) {
	hash := o.hash(k)
	for i := len(o.gens) - 1; i >= 0; i-- {
		if st := o.gens[i].find(k, hash); st != nil {
			if e, ok := st.events.get(idx); ok {
				return e, true
			}
		}
	}
	return entry{}, false
}

// entries sets out[i] to the overlay's entry of event from+i of k, where it has one.
func (o *overlay) entries(k StreamKey, from uint64, out []entry) {
	hash := o.hash(k)
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, g := range o.gens {
		st := g.find(k, hash)
		if st == nil || st.events.empty() {
			continue
		}
		for i := range out {
			if e, ok := st.events.get(from + uint64(i)); ok {
				out[i] = e
			}
		}
	}
}

// posLocked returns the position of the record lsn if the overlay has it. REQUIRES: o.mu held.
func (o *overlay) posLocked(lsn uint64) (wal.Pos, bool) {
	for _, g := range o.gens {
		if pos, ok := g.records.get(lsn); ok {
			return pos, true
		}
	}
	return wal.Pos{}, false
}

// ids returns, sorted and once each, the ids of the overlay's streams of type typ that have
// events and sort after cursor.
func (o *overlay) ids(typ, cursor string) []string {
	var out []string
	o.mu.RLock()
	for _, g := range o.gens {
		for _, st := range g.streams {
			for ; st != nil; st = st.next {
				if k := st.key; k.Type == typ && st.head.Length > 0 && k.ID > cursor {
					out = append(out, k.ID)
				}
			}
		}
	}
	o.mu.RUnlock()
	slices.Sort(out)
	return slices.Compact(out)
}

// spaceLocked returns the newest version of a space key in the overlay. REQUIRES: o.mu held.
func (o *overlay) spaceLocked(k string) (spaceEntry, bool) {
	for i := len(o.gens) - 1; i >= 0; i-- {
		if e, ok := o.gens[i].space[k]; ok {
			return e, true
		}
	}
	return spaceEntry{}, false
}

func (o *overlay) spaceEntry(k string) (spaceEntry, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.spaceLocked(k)
}

// spaceItem is a space key and the overlay's newest version of it.
type spaceItem struct {
	key string
	e   spaceEntry
}

// spaceRange returns, in key order, the overlay's newest version of every space key with the
// given prefix for which in says yes.
func (o *overlay) spaceRange(prefix string, in func(string) bool) []spaceItem {
	var out []spaceItem
	o.mu.RLock()
	for gi, g := range o.gens {
		for k, e := range g.space {
			if !strings.HasPrefix(k, prefix) || !in(k) {
				continue
			}
			if newer := slices.ContainsFunc(o.gens[gi+1:], func(n *ovGen) bool { _, ok := n.space[k]; return ok }); !newer {
				out = append(out, spaceItem{k, e})
			}
		}
	}
	o.mu.RUnlock()
	slices.SortFunc(out, func(a, b spaceItem) int { return strings.Compare(a.key, b.key) })
	return out
}
