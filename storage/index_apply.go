package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// indexTx is one bbolt write transaction applying records in log order. The same code serves the
// background indexer, the catch-up at open and Rebuild, which is why the index equals a rebuild.
type indexTx struct {
	tx                                                       *bolt.Tx
	meta, headRuns, heads, names, events, tails, space, jobs *bolt.Bucket
	records                                                  recordBlocks
	wm                                                       watermark
	// numberedBefore is the count of stream numbers handed out before the transaction: runs
	// appended to those streams go to the tails (tail_runs.go), those of streams it numbers to
	// the right edge of the events bucket. tailState is the tails' span of epochs and the rolling
	// merge's place, epoch the epoch of this transaction's tail runs (0 until it writes one), and
	// tailsChanged says that finish must write the state.
	numberedBefore uint64
	tailState      tailState
	epoch          uint64
	tailsChanged   bool
	// recent holds the names not yet merged into the names bucket, as of the transaction's start
	// (the caller adds newNames to it once the transaction commits, see committed); tuning
	// holds the least number of recent names that makes finish merge them, and the fewest tail
	// runs its share of the rolling merge moves.
	recent *recentNames
	tuning indexTuning
	// cache holds the heads earlier transactions looked up (head_cache.go); nil outside the
	// indexer.
	cache *headCache
	// newNames are the streams this transaction numbered; merged says that finish put them and
	// every recent name into the names bucket.
	newNames []nameEntry
	merged   bool
	// txHeads caches the heads this transaction changed; they are written once, in finish, so a
	// stream touched by many records of a batch costs one Put. It is keyed by the stream's hash,
	// which the commit path computed already (hashKey; streams whose hashes collide are chained
	// through txHead.sameHash): a map keyed by StreamKey hashed both strings of the key at every
	// look-up. Orders to new streams in process (BenchmarkImplicationWrite's map10/new, five
	// alternated runs) took 5.3% fewer CPU seconds for it, orders over the catalog 1.3% fewer.
	txHeads map[uint64]*txHead
	hashKey func(StreamKey) uint64
	// known lists the heads of txHeads that had a number when the transaction began, numbered
	// those it numbered, in the order it numbered them. Every number it hands out is larger than
	// every earlier one, so known sorted by number then numbered is the heads' key order: finish
	// sorts only the heads of streams written before. Sorting every head of the map took about
	// 7% of the indexer's time under writes to new streams.
	known, numbered []*txHead
	// pendingEvents and pendingSpace hold this transaction's Puts to those buckets until finish
	// writes them in key order. Their keys arrive in no order (aggregate ids are UUIDs, records
	// interleave streams); in that order every Put seeks from the root into another page and
	// shifts the later entries of a node that grows all transaction long, while in key order the
	// seeks walk the pages once, left to right.
	pendingEvents []eventPut
	pendingSpace  []kv
	// putHeads lists the heads that pendingEvents has puts for, and placed is where
	// placeEventPuts lays pendingEvents out in key order.
	putHeads []*txHead
	placed   []eventPut
	// spacePuts counts this transaction's puts and deletes of record-space keys, orderedPuts
	// those of ordered puts (Put.Stream), whose keys go to the end of their range: see finish.
	spacePuts, orderedPuts int
	// arena hands out the keys and values of Puts: bbolt keeps them until the transaction
	// commits, so they are carved from chunks instead of allocated one by one. chunks lists the
	// chunks handed out, and spare those a committed transaction gave back (release) for this
	// one to take first.
	arena         []byte
	chunks, spare [][]byte
	// slab hands out the txHeads of heads; slabs lists the slabs handed out (slab the last), and
	// spareSlabs those a committed transaction gave back (release), cleared, for this one to take
	// first: under orders to new streams, a new slab for every 256 new streams was 4.6% of the bytes
	// allocated (BenchmarkImplicationWrite, map10/new).
	slab              []txHead
	slabs, spareSlabs [][]txHead
}

// indexScratch keeps the working memory of the background indexer's transactions from one to
// the next: the buffers of a transaction of tens of thousands of records would otherwise be
// grown again, copy by copy, every time.
type indexScratch struct {
	pendingEvents []eventPut
	pendingSpace  []kv
	putHeads      []*txHead
	placed        []eventPut
	known         []*txHead
	numbered      []*txHead
	txHeads       map[uint64]*txHead
	newNames      []nameEntry
	chunks        [][]byte
	slabs         [][]txHead
}

// release hands x's buffers back to sc, emptied so that they keep nothing of x alive, unless
// they outgrew scratchKeep (a burst of large records should not hold its memory for good). Call
// it once x is done with, whether its transaction committed or not: bbolt lets go of the keys
// and values of Puts when a transaction ends, so the arena's chunks are free again too (up to
// arenaKeep of them). Under orders to new streams, new chunks were 6% of the bytes the server
// allocated; the kept ones halve that (merges and transactions of several batches take more).
func (x *indexTx) release(sc *indexScratch) {
	chunks := append(x.spare, x.chunks...)
	clear(chunks[min(len(chunks), arenaKeep):])
	slabs := x.spareSlabs
	for _, sl := range x.slabs {
		if len(slabs) == slabKeep {
			break
		}
		clear(sl[:cap(sl)])
		slabs = append(slabs, sl[:0])
	}
	*sc = indexScratch{
		pendingEvents: reusable(x.pendingEvents),
		pendingSpace:  reusable(x.pendingSpace),
		putHeads:      reusable(x.putHeads),
		placed:        reusable(x.placed),
		known:         reusable(x.known),
		numbered:      reusable(x.numbered),
		newNames:      reusable(x.newNames),
		chunks:        chunks[:min(len(chunks), arenaKeep)],
		slabs:         slabs,
	}
	if len(x.txHeads) <= scratchKeep {
		clear(x.txHeads)
		sc.txHeads = x.txHeads
	}
}

// scratchKeep is the largest buffer, in entries, that indexScratch keeps: enough for a
// transaction of about 20,000 writes of ten events each.
const scratchKeep = 1 << 18

// reusable returns b emptied and cleared if it is small enough to keep, else nil.
func reusable[T any](b []T) []T {
	if cap(b) > scratchKeep {
		return nil
	}
	clear(b[:cap(b)])
	return b[:0]
}

const arenaChunk = 64 << 10

// arenaKeep is how many arena chunks indexScratch keeps (16 MiB): those of about two full
// batches of orders implying ten events to new streams.
const arenaKeep = 256

// headSlab is how many txHeads the transaction allocates at once, and slabKeep how many slabs
// indexScratch keeps (5.5 MB, the new streams of about 3,000 orders of ten items).
const (
	headSlab = 256
	slabKeep = 128
)

// alloc returns n bytes (length 0, capacity n) that no other Put of this transaction shares.
func (x *indexTx) alloc(n int) []byte {
	if n > arenaChunk/8 {
		return make([]byte, 0, n)
	}
	if cap(x.arena)-len(x.arena) < n {
		if k := len(x.spare); k > 0 {
			x.arena, x.spare = x.spare[k-1][:0], x.spare[:k-1]
		} else {
			x.arena = make([]byte, 0, arenaChunk)
		}
		x.chunks = append(x.chunks, x.arena)
	}
	b := x.arena[len(x.arena) : len(x.arena) : len(x.arena)+n]
	x.arena = x.arena[:len(x.arena)+n]
	return b
}

// eventPut is one buffered entry for the events bucket, its key the stream's number (h.no) and
// idx; flushPending writes a stream's consecutive ones as a run (event_runs.go).
type eventPut struct {
	idx uint64
	v   []byte
	h   *txHead // the stream's head in this transaction
}

// kv is one buffered Put; seq is its place in the transaction, so that of two Puts to one key
// the later wins.
type kv struct {
	k, v []byte
	seq  int
}

type txHead struct {
	head
	key   StreamKey
	only  eventRef // where the stream's event is while it has one (see index_codec.go)
	dirty bool
	// sameHash is the next head of txHeads whose stream has the same hash, hash.
	sameHash *txHead
	hash     uint64
	// puts counts the stream's puts in pendingEvents; placeEventPuts uses it while it runs.
	puts int
	// bucketEnd is the highest event index the events bucket may hold for the stream: its
	// length in the index when the transaction began (0 while the head holds its only event),
	// then raised by each run the transaction writes. A run that starts above it overlaps none.
	bucketEnd uint64
}

// Values handed to bbolt's Put must stay untouched until the transaction commits, so every key and
// value below is freshly allocated or taken from the transaction's arena.

// createBuckets prepares an index for use; a new index gets the current format.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("storage: create index bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	if meta.Get(metaStateKey) == nil && meta.Get(metaFormatKey) == nil {
		if err := meta.Put(metaTailsKey, emptyTails.marshal()); err != nil {
			return err
		}
		return meta.Put(metaFormatKey, u64Key(indexFormat))
	}
	return nil
}

// formatOf returns the format of an index; 1 for an index from before formats were recorded.
func formatOf(tx *bolt.Tx) uint64 {
	b := tx.Bucket(bucketMeta).Get(metaFormatKey)
	if len(b) != 8 {
		return 1
	}
	return binary.BigEndian.Uint64(b)
}

func readWatermark(tx *bolt.Tx) (watermark, error) {
	b := tx.Bucket(bucketMeta).Get(metaStateKey)
	if b == nil {
		return watermark{}, nil
	}
	return unmarshalWatermark(b)
}

// newIndexTx starts applying records in tx, with the buffers of sc if it is not nil (see
// release). recent must hold exactly the names of the streams numbered above the watermark's
// named count. hashKey hashes the streams of groups that carry no hash (decoded records); it must
// be the function the commit path hashed the others with.
func newIndexTx(tx *bolt.Tx, sc *indexScratch, recent *recentNames, tuning indexTuning, hashKey func(StreamKey) uint64) (*indexTx, error) {
	wm, err := readWatermark(tx)
	if err != nil {
		return nil, err
	}
	tails, err := readTailState(tx.Bucket(bucketMeta))
	if err != nil {
		return nil, err
	}
	x := &indexTx{
		tx: tx, wm: wm, numberedBefore: wm.streams, tailState: tails,
		recent: recent, tuning: tuning, hashKey: hashKey,
		meta: tx.Bucket(bucketMeta), headRuns: tx.Bucket(bucketHeadRuns), heads: tx.Bucket(bucketHeads), names: tx.Bucket(bucketNames),
		events: tx.Bucket(bucketEvents), tails: tx.Bucket(bucketTails), space: tx.Bucket(bucketSpace), jobs: tx.Bucket(bucketJobs),
	}
	if sc != nil {
		x.pendingEvents, x.pendingSpace, x.known, x.numbered, x.txHeads = sc.pendingEvents, sc.pendingSpace, sc.known, sc.numbered, sc.txHeads
		x.putHeads, x.placed = sc.putHeads, sc.placed
		x.newNames, x.spare, x.spareSlabs = sc.newNames, sc.chunks, sc.slabs
	}
	x.records = recordBlocks{b: tx.Bucket(bucketRecords), alloc: x.alloc}
	// Records are keyed by increasing lsn, runs of heads by increasing number, and a stream's
	// events by increasing index under a number that grows with new streams: pages fill from the
	// left and may be split full (at bbolt's default of half, every page a transaction writes
	// would stay half empty). A heads key is put at a random place once, when its stream's head
	// first changes after the transaction that numbered it, and overwritten from then on; kept
	// full, those pages are half as many for a transaction to write again (orders over a
	// catalog of 10,000 streams, in process, took about 6% more CPU at half).
	x.records.b.FillPercent = 1.0
	x.events.FillPercent = 1.0
	x.tails.FillPercent = 1.0
	x.headRuns.FillPercent = 1.0
	x.heads.FillPercent = 1.0
	return x, nil
}

// finish writes the changed heads (those of the streams it numbered as runs, head_runs.go),
// merges the recent names when enough have gathered, and writes the watermark; call it once
// before the transaction commits, and committed once it has.
func (x *indexTx) finish() error {
	if err := x.flushPending(); err != nil {
		return err
	}
	// Heads are keyed by distinct big-endian numbers: comparing the numbers orders them as bbolt
	// does.
	slices.SortFunc(x.known, func(a, b *txHead) int { return cmp.Compare(a.no, b.no) })
	for _, h := range x.known {
		if !h.dirty {
			continue
		}
		v := h.marshal(x.alloc(headSize(h.Length, h.key)), h.key, h.only)
		if err := x.heads.Put(binary.BigEndian.AppendUint64(x.alloc(8), h.no), v); err != nil {
			return err
		}
	}
	// A stream is numbered with its first event, so each of these heads changed.
	if err := putHeadRuns(x.headRuns, x.numbered, x.alloc); err != nil {
		return err
	}
	if err := x.mergeNames(); err != nil {
		return err
	}
	x.space.FillPercent = spaceFill(x.spacePuts, x.orderedPuts)
	if err := x.records.flush(); err != nil {
		return err
	}
	if err := x.mergeTailsStep(); err != nil {
		return err
	}
	if x.tailsChanged {
		if err := x.meta.Put(metaTailsKey, x.tailState.marshal()); err != nil {
			return err
		}
	}
	return x.meta.Put(metaStateKey, x.wm.marshal())
}

// mergeNames writes every recent name and the transaction's new ones to the names bucket as a
// run (name_runs.go), once there are enough of them (recent_names.go).
func (x *indexTx) mergeNames() error {
	n := len(x.newNames)
	if x.recent != nil {
		n += x.recent.len()
	}
	if n == 0 || !mergeDue(n, x.wm.named, x.tuning.namesMergeMin) {
		return nil
	}
	all := x.newNames
	if x.recent != nil {
		// Appending past newNames' length leaves newNames as it is, for committed.
		all = x.recent.entries(all)
	}
	// No stream is numbered twice, so no two names share a key.
	if err := writeRun(x.names, sortNames(all), x.wm.named, x.wm.streams, x.alloc); err != nil {
		return err
	}
	x.wm.named = x.wm.streams
	x.merged = true
	return nil
}

// nameKey is a stream's key as the names bucket spells it (type 0 id) and the stream's number.
type nameKey struct {
	key []byte
	no  uint64
}

// sortNames returns es in the names bucket's key order (type 0 id, compared as bytes), their keys
// spelled out in one buffer. A merge sorts up to namesMergeMax names whose strings lie all over
// the heap: reading them is mostly waiting for memory, so each is read once, here, in the order of
// es; writing the run then reads the buffer (in profiles of orders to new streams, spelling each
// key again from its strings while writing the run was 2% of the server's processor time).
// Comparing the names took more than a quarter of a merge's time, so each is reduced to its type's
// rank among the merge's types and eight bytes of its id, which order almost every pair without
// reading the keys again; only names equal in both are compared whole. The eight bytes follow the
// prefix that every id of the name's type shares in the merge: ids that all begin alike
// (sequential ones such as "sku-000123") would otherwise abbreviate alike and leave their order
// to comparisons. The abbreviations are radix sorted, a byte of the id at a time from the last
// and then by type, each pass stable: in profiles of orders to new streams a comparison sort of
// them was half of the merge's sorting.
func sortNames(es []nameEntry) []nameKey {
	if len(es) == 0 {
		return nil
	}
	type abbrev struct {
		id        uint64
		typ, from uint32
	}
	// typeInfo is what the abbreviations need of a type: its rank, and how many bytes every id of
	// the type begins with alike (first is the type's first id).
	type typeInfo struct {
		name, first string
		shared      int
		rank        uint32
	}
	// Most names of a merge share one type string: the map is skipped for a run of them.
	size, at := 0, 0
	positions := make(map[string]int)
	var types []typeInfo
	for i, e := range es {
		size += len(e.key.Type) + 1 + len(e.key.ID)
		if i == 0 || e.key.Type != es[i-1].key.Type {
			var ok bool
			if at, ok = positions[e.key.Type]; !ok {
				at = len(types)
				positions[e.key.Type] = at
				types = append(types, typeInfo{name: e.key.Type, first: e.key.ID, shared: len(e.key.ID)})
			}
		}
		if t := &types[at]; t.shared > 0 {
			t.shared = commonPrefix(t.first[:t.shared], e.key.ID)
		}
	}
	byName := make([]int, len(types))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(types[a].name, types[b].name) })
	for rank, i := range byName {
		types[i].rank = uint32(rank)
	}
	keys := make([]byte, 0, size)
	ends := make([]int, len(es))
	abbrevs, spare := make([]abbrev, len(es)), make([]abbrev, len(es))
	var t *typeInfo
	for i, e := range es {
		if i == 0 || e.key.Type != es[i-1].key.Type {
			t = &types[positions[e.key.Type]]
		}
		idAt := len(keys) + len(e.key.Type) + 1
		keys = streamKeyBytes(keys, e.key)
		ends[i] = len(keys)
		var id [8]byte
		copy(id[:], keys[idAt+t.shared:])
		abbrevs[i] = abbrev{id: binary.BigEndian.Uint64(id[:]), typ: t.rank, from: uint32(i)}
	}
	keyOf := func(i uint32) []byte {
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		return keys[from:ends[i]:ends[i]]
	}
	var counts [256]int
	for shift := 0; shift < 64; shift += 8 {
		clear(counts[:])
		for _, a := range abbrevs {
			counts[byte(a.id>>shift)]++
		}
		if counts[byte(abbrevs[0].id>>shift)] == len(abbrevs) {
			continue // every id has this byte (ids of hex digits use 16 values of 256)
		}
		sum := 0
		for d, c := range counts {
			counts[d], sum = sum, sum+c
		}
		for _, a := range abbrevs {
			d := byte(a.id >> shift)
			spare[counts[d]] = a
			counts[d]++
		}
		abbrevs, spare = spare, abbrevs
	}
	if len(types) > 1 {
		starts := make([]int, len(types)+1)
		for _, a := range abbrevs {
			starts[a.typ+1]++
		}
		for i := 1; i < len(starts); i++ {
			starts[i] += starts[i-1]
		}
		for _, a := range abbrevs {
			spare[starts[a.typ]] = a
			starts[a.typ]++
		}
		abbrevs = spare
	}
	for i := 0; i < len(abbrevs); {
		j := i + 1
		for j < len(abbrevs) && abbrevs[j].typ == abbrevs[i].typ && abbrevs[j].id == abbrevs[i].id {
			j++
		}
		if j-i > 1 {
			// Equal types: the keys compare as the ids do.
			slices.SortFunc(abbrevs[i:j], func(a, b abbrev) int { return bytes.Compare(keyOf(a.from), keyOf(b.from)) })
		}
		i = j
	}
	sorted := make([]nameKey, len(es))
	for i, a := range abbrevs {
		sorted[i] = nameKey{keyOf(a.from), es[a.from].no}
	}
	return sorted
}

// committed hands the transaction's names to the recent names once the transaction committed:
// its new streams, or the news that every recent name is now in the names bucket; and the heads
// of the streams it found numbered to the head cache.
func (x *indexTx) committed() {
	if x.cache != nil {
		x.cache.keep(x.known)
	}
	switch {
	case x.recent == nil:
	case x.merged:
		x.recent.clear()
	default:
		x.recent.add(x.newNames)
	}
}

// flushPending writes the buffered events and space Puts. A carry record reads those buckets, so
// it flushes them first.
func (x *indexTx) flushPending() error {
	pe := x.placeEventPuts()
	for i := 0; i < len(pe); {
		// A run takes the events that follow its first one in the same stream, up to
		// maxRunEntries; of the puts to one event (in the order they were made), the last
		// replaces the others.
		h, first := pe[i].h, pe[i].idx
		end, n := i, uint64(0)
		for end < len(pe) && pe[end].h == h && pe[end].idx == first+n && n < maxRunEntries {
			for end < len(pe) && pe[end].h == h && pe[end].idx == first+n {
				end++
			}
			n++
		}
		run := x.alloc(int(n) * entrySize)
		for ; i < end; i++ {
			if i+1 < end && pe[i+1].idx == pe[i].idx {
				continue
			}
			run = append(run, pe[i].v...)
		}
		if err := x.writeRun(h.no, first, run, first > h.bucketEnd); err != nil {
			return err
		}
		h.bucketEnd = max(h.bucketEnd, first+n-1)
	}
	if err := putSorted(x.space, x.pendingSpace); err != nil {
		return err
	}
	x.pendingEvents, x.pendingSpace, x.putHeads = x.pendingEvents[:0], x.pendingSpace[:0], x.putHeads[:0]
	return nil
}

// putEvent buffers the entry v of event idx of h's stream for flushPending.
func (x *indexTx) putEvent(h *txHead, idx uint64, v []byte) {
	if h.puts == 0 {
		x.putHeads = append(x.putHeads, h)
	}
	h.puts++
	x.pendingEvents = append(x.pendingEvents, eventPut{idx, v, h})
}

// placeEventPuts returns pendingEvents in key order (stream number, then index), the puts to one
// event in the order they were made. It sorts the streams rather than the puts: orders over a
// catalog of inventory streams put about ten events to each stream a transaction touches, and
// comparing every put with the others was a tenth of the indexer's time. Each stream's puts
// take the places after those of the streams numbered below it, in the order they came, which
// is index order except after a carry's put of an older event; such a stream's puts alone are
// sorted then. Puts that came in key order already, as those to streams numbered one after the
// other do (orders to new streams), stay where they are.
func (x *indexTx) placeEventPuts() []eventPut {
	inOrder := slices.IsSortedFunc(x.pendingEvents, func(a, b eventPut) int {
		return cmp.Or(cmp.Compare(a.h.no, b.h.no), cmp.Compare(a.idx, b.idx))
	})
	if inOrder {
		for _, h := range x.putHeads {
			h.puts = 0
		}
		return x.pendingEvents
	}
	// Distinct heads have distinct numbers.
	slices.SortFunc(x.putHeads, func(a, b *txHead) int { return cmp.Compare(a.no, b.no) })
	next := 0
	for _, h := range x.putHeads {
		next, h.puts = next+h.puts, next
	}
	placed := slices.Grow(x.placed[:0], len(x.pendingEvents))[:len(x.pendingEvents)]
	for _, p := range x.pendingEvents {
		placed[p.h.puts] = p
		p.h.puts++
	}
	byIndex := func(a, b eventPut) int { return cmp.Compare(a.idx, b.idx) }
	from := 0
	for _, h := range x.putHeads {
		// h.puts is now where its stream's places end.
		if mine := placed[from:h.puts]; !slices.IsSortedFunc(mine, byIndex) {
			slices.SortStableFunc(mine, byIndex)
		}
		from, h.puts = h.puts, 0
	}
	x.placed = placed
	return placed
}

// spaceFill is how full the space bucket's pages are left when the transaction commits (bbolt
// splits nodes then), given its puts and how many of them were ordered. Ordered puts, the bulk of
// a write to a new stream, append at the end of their key's range, and a transaction appends
// many to each range: splitting those pages at bbolt's default of half left the bucket half empty
// (twice the pages to write, read and keep), while full pages there cost nothing later. Puts of
// unrelated keys land all over the bucket, where full pages would split again at the next put:
// in a bbolt model, random keys left pages 68% used at half, 30% at full; keys appended at the
// ends of 1 to 100 ranges left them 47% used at half, 96% at full (and 10,000 ranges, 50% and
// 65%). The few unrelated keys of a transaction that is mostly ordered puts (an order's
// idempotency key beside the references of its eleven streams, say) are split at full too: their
// pages end up less used than at half, but they are at most a tenth of its puts, where the
// references fill half the pages they did. The fill only shapes pages, never what the index
// holds, so a rebuild, whose records no longer say which puts were ordered, gives the same index.
func spaceFill(puts, ordered int) float64 {
	if puts > 0 && ordered*10 >= puts*9 {
		return 1.0
	}
	return bolt.DefaultFillPercent
}

// putSorted puts kvs in key order; of several puts to one key, only the last counts. Many
// commits put the same key (an actor's reference to a busy stream, say), and a transaction
// writes each key once.
func putSorted(b *bolt.Bucket, kvs []kv) error {
	order := sortKVs(kvs)
	for i, o := range order {
		p := &kvs[o.at]
		if i+1 < len(order) && bytes.Equal(kvs[order[i+1].at].k, p.k) {
			continue
		}
		if err := b.Put(p.k, p.v); err != nil {
			return err
		}
	}
	return nil
}

// kvRef is one kv in sortKVs' order: its place in kvs and its working key.
type kvRef struct {
	abbrev uint64
	at     uint32
}

// sortKVs returns the places of kvs sorted by key, then seq. Sorting the kvs themselves with
// whole keys compared was 3% of the server's processor under orders: the references of a
// transaction share long prefixes (their space, role, actor and stream type, and the leading
// digits of their streams' ages), which every comparison read again, and every swap moved two
// 56-byte kvs. Instead small refs are sorted by seven bytes of their keys taken just past the
// prefix they all share, and each run that ties on those is sorted again from seven bytes
// further on, so a comparison is one of two integers.
func sortKVs(kvs []kv) []kvRef {
	order := make([]kvRef, len(kvs))
	for i := range order {
		order[i].at = uint32(i)
	}
	sortKVRefs(kvs, order, 0)
	return order
}

// sortKVRefs sorts order, whose kvs' keys agree on their first from bytes.
func sortKVRefs(kvs []kv, order []kvRef, from int) {
	if len(order) < 2 {
		return
	}
	first := kvs[order[0].at].k
	shared := len(first)
	for _, o := range order[1:] {
		if k := kvs[o.at].k; len(k) < shared || !bytes.Equal(k[from:shared], first[from:shared]) {
			shared = from + commonPrefix(first[from:shared], k[from:min(shared, len(k))])
			if shared == from {
				break
			}
		}
	}
	for i := range order {
		order[i].abbrev = abbreviate(kvs[order[i].at].k[shared:])
	}
	slices.SortFunc(order, func(a, b kvRef) int {
		if c := cmp.Compare(a.abbrev, b.abbrev); c != 0 {
			return c
		}
		return kvs[a.at].seq - kvs[b.at].seq
	})
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && order[j].abbrev == order[i].abbrev {
			j++
		}
		// Keys that tie with fewer than seven bytes left are equal; the others go on.
		if j-i > 1 && order[i].abbrev&0xff == abbrevBytes {
			sortKVRefs(kvs, order[i:j], shared+abbrevBytes)
		}
		i = j
	}
}

// abbrevBytes is how many bytes of a key abbreviate keeps.
const abbrevBytes = 7

// abbreviate packs the first seven bytes of rest (zero-padded) and how many of them rest has
// into an integer whose order is the byte order of the rests, except that rests which share
// their first seven bytes tie. The count tells a short rest from a longer one padded with zeros.
func abbreviate(rest []byte) uint64 {
	var b [8]byte
	n := copy(b[:abbrevBytes], rest)
	b[abbrevBytes] = byte(n)
	return binary.BigEndian.Uint64(b[:])
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix[T string | []byte](a, b T) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// head returns the head of the stream of g as of the records applied so far. g.fresh says that no
// earlier record touched the stream, so the index holds no head for it.
func (x *indexTx) head(g *recGroup) (*txHead, error) {
	k, hash, fresh := g.stream, g.hash, g.fresh
	if hash == 0 {
		hash = x.hashKey(k)
	}
	first := x.txHeads[hash]
	for h := first; h != nil; h = h.sameHash {
		if h.key == k {
			return h, nil
		}
	}
	if len(x.slab) == cap(x.slab) {
		if k := len(x.spareSlabs); k > 0 {
			x.slab, x.spareSlabs = x.spareSlabs[k-1], x.spareSlabs[:k-1]
		} else {
			x.slab = make([]txHead, 0, headSlab)
		}
		x.slabs = append(x.slabs, x.slab)
	}
	x.slab = x.slab[:len(x.slab)+1]
	h := &x.slab[len(x.slab)-1]
	h.key, h.hash = k, hash
	if !fresh && x.cache != nil && x.cache.get(hash, k, h) {
		x.known = append(x.known, h)
	} else if !fresh {
		if err := x.lookupHead(k, h); err != nil {
			return nil, err
		}
		if h.no != 0 {
			x.known = append(x.known, h)
		}
	}
	if x.txHeads == nil {
		x.txHeads = make(map[uint64]*txHead)
	}
	h.sameHash = first
	x.txHeads[hash] = h
	return h, nil
}

// lookupHead reads the indexed head of k into h; it leaves h as it is if the index has none.
func (x *indexTx) lookupHead(k StreamKey, h *txHead) error {
	var no uint64
	if x.recent != nil {
		no = x.recent.get(k)
	}
	if no == 0 {
		if no = lookupName(x.names, streamKeyBytes(nil, k)); no == 0 {
			return nil
		}
	}
	nk := u64Key(no)
	b, err := headValue(x.heads, x.headRuns, nk)
	if err != nil {
		return err
	}
	if b == nil {
		return fmt.Errorf("%w: stream %s has number %d but no head", ErrBadIndex, k, no)
	}
	if err := h.unmarshal(nk, b); err != nil {
		return err
	}
	if h.Length == 1 {
		h.only = headOnly(b)
	} else {
		h.bucketEnd = h.Length
	}
	return nil
}

// apply applies one record found at pos. See record_codec.go for the precedence rule.
func (x *indexTx) apply(r *record, pos wal.Pos) error {
	if err := x.records.set(r.lsn, pos); err != nil {
		return err
	}
	if len(r.superseded) > 0 {
		if err := x.addJob(r); err != nil {
			return err
		}
	}
	var ordinal uint32
	for gi := range r.groups {
		g := &r.groups[gi]
		if err := x.applyGroup(r, g, ordinal); err != nil {
			return err
		}
		ordinal += uint32(len(g.events))
	}
	for _, p := range r.puts {
		if err := x.applySpace(r, p.Space, p.Key, true, p.Value); err != nil {
			return err
		}
		if p.Stream != (StreamKey{}) {
			x.orderedPuts++
		}
	}
	x.spacePuts += len(r.puts) + len(r.deletes)
	for _, d := range r.deletes {
		if err := x.applySpace(r, d.Space, d.Key, false, nil); err != nil {
			return err
		}
	}
	x.wm.seg = pos.Seg
	x.wm.lsn = r.lsn
	return nil
}

func (x *indexTx) applyGroup(r *record, g *recGroup, ordinal uint32) error {
	h, err := x.head(g)
	if err != nil {
		return err
	}
	changed := false
	for i := range g.events {
		ev := &g.events[i]
		idx := g.first + uint64(i)
		older, err := x.carriesOlder(r, h, idx)
		if err != nil {
			return err
		}
		if older {
			continue
		}
		if h.no == 0 {
			// A stream is numbered when its first event is indexed, so every head and every name
			// is of a stream with events, and numbers depend on the log alone, not on where
			// transactions begin.
			x.wm.streams++
			h.no = x.wm.streams
			x.newNames = append(x.newNames, nameEntry{g.stream, h.no})
			x.numbered = append(x.numbered, h)
		}
		if idx > 1 && h.Length == 1 {
			// The stream's second event: its first one's entry leaves the head.
			first := h.onlyEntry(h.only)
			x.putEvent(h, 1, first.marshal(x.alloc(entrySize)))
		}
		if idx == 1 && h.Length <= 1 {
			h.only = eventRef{holder: r.lsn, eff: r.eff, ordinal: ordinal + uint32(i)}
		} else {
			e := entry{holder: r.lsn, eff: r.eff, ordinal: ordinal + uint32(i), sid: ev.sid, ts: ev.ts, hash: ev.hash}
			x.putEvent(h, idx, e.marshal(x.alloc(entrySize)))
		}
		if x.wm.lastSID.Less(ev.sid) {
			x.wm.lastSID = ev.sid
		}
		// The head records the lsn of the last record that touched its first or last event, even
		// with equal values, so that a carry leaves the same head whether or not the record it
		// copies is still in the log.
		if idx >= h.Length {
			h.Length, h.LastHash, h.LastTimestamp, h.LastStreamID = idx, ev.hash, ev.ts, ev.sid
			changed = true
		}
		if idx == 1 {
			h.FirstTimestamp = ev.ts
			changed = true
		}
	}
	if changed {
		h.lsn = r.lsn
		h.dirty = true
	}
	return nil
}

// carriesOlder reports whether r holds an older version of event idx of h than the index does.
// Only a carry can: an ordinary record's eff is its own lsn, larger than every eff applied before
// it.
func (x *indexTx) carriesOlder(r *record, h *txHead, idx uint64) (bool, error) {
	if r.eff == r.lsn || h.no == 0 {
		return false, nil
	}
	if idx == 1 && h.Length == 1 {
		return h.only.eff > r.eff, nil
	}
	// A carry reads the bucket: what the transaction holds back goes in first.
	if err := x.flushPending(); err != nil {
		return false, err
	}
	b, err := entryAt(eventRuns{events: x.events, tails: x.tails, span: x.tailState.tailSpan}, h.no, idx)
	if err != nil || b == nil {
		return false, err
	}
	var old entry
	if err := old.unmarshal(b); err != nil {
		return false, err
	}
	return old.eff > r.eff, nil
}

func (x *indexTx) applySpace(r *record, space, key string, live bool, value []byte) error {
	k := appendSpaceKey(x.alloc(len(space)+1+len(key)), space, key)
	b, err := x.getIfCarry(r, x.space, k)
	if err != nil {
		return err
	}
	if b != nil {
		var old spaceEntry
		if err := old.unmarshal(b); err != nil {
			return err
		}
		if old.eff > r.eff {
			return nil
		}
	}
	e := spaceEntry{live: live, eff: r.eff, holder: r.lsn, value: value}
	x.pendingSpace = append(x.pendingSpace, kv{k: k, v: e.marshal(x.alloc(spaceEntryFixedSize + len(value))), seq: len(x.pendingSpace)})
	return nil
}

// addJob records the erasure work a rewrite or erasure record implies: dropping the superseded
// records that are still in the log. Superseded records always precede the record, so at this
// point the records bucket knows exactly which of them remain, during live indexing and during a
// rebuild. A rewrite record has one group, its stream; an erasure record (Erase) has none.
func (x *indexTx) addJob(r *record) error {
	if len(r.groups) > 1 {
		return fmt.Errorf("%w: rewrite record with %d groups", ErrBadRecord, len(r.groups))
	}
	var present []uint64
	for _, l := range r.superseded {
		ok, err := x.records.has(l)
		if err != nil {
			return err
		}
		if ok {
			present = append(present, l)
		}
	}
	if len(present) == 0 {
		return nil
	}
	var stream StreamKey
	if len(r.groups) == 1 {
		stream = r.groups[0].stream
	}
	v := streamKeyBytes(nil, stream)
	v = append(v, 0)
	return x.jobs.Put(u64Key(r.lsn), marshalLSNs(v, present))
}

func (x *indexTx) getIfCarry(r *record, b *bolt.Bucket, k []byte) ([]byte, error) {
	if r.eff == r.lsn {
		return nil, nil
	}
	if err := x.flushPending(); err != nil {
		return nil, err
	}
	return b.Get(k), nil
}
