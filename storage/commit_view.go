package storage

// commitView is the commit path's map of stream heads (Store.mu.heads), which includes commits
// not yet durable. It keeps its heads on a list in the order they were last written, so that it
// can forget the oldest ones once readers see them, a few at each head a commit writes while it
// holds more than its bound: forgetting them all at once, in one pass over the map under the
// commit lock, held every commit up for as long as the pass took (tens of milliseconds with
// 100,000 streams written in a second, found with an execution trace: the pass was even
// preempted while every committer waited).
//
// A head whose last record is published (in the overlay, or already in bbolt) can be forgotten
// because the durable view then gives the same head. A head whose record is not is never
// forgotten, so the view may outgrow its bound while the log's fsyncs lag; its table then grows,
// and shrinks again as prune forgets the heads, so that one stall does not keep its memory.
type commitView struct {
	// slots is a hash table of the heads by the hash of their stream key (knownStreams.hashKey),
	// chained through commitHead.chain; it has a power of two slots, at least as many as heads.
	// The commit path hashes a stream once, for the filter of known streams and for the view:
	// a map keyed by StreamKey hashed the key's strings again at every look-up, insertion and
	// deletion (two fifths of the commit lock's time under orders to new streams).
	slots []*commitHead
	n     int
	// root links the list: root.next is the least recently written head, root.prev the most.
	root commitHead
	// bound is the number of heads above which adding one forgets old ones.
	bound int
	// free holds entries prune forgot, for add to take instead of allocating: under writes to
	// new streams the view forgets about one head for each it adds. No one else points to them:
	// the commit path holds entries only while it holds the commit lock, and prune runs at the
	// end of a commit.
	free []*commitHead
}

// freeMax bounds the entries the view keeps for reuse.
const freeMax = 4 * pruneStep

type commitHead struct {
	head
	key        StreamKey
	hash       uint64
	chain      *commitHead // the next head of the same slot
	prev, next *commitHead
}

// commitViewBound keeps about as many heads as 64 writers to fresh streams commit in half a
// second, so that a stream written again within that time is found without a search of the
// overlay and bbolt. Writes to fresh streams only add heads and forget old ones, and a larger view
// costs them more at each step: with 1<<16, the view's operations took about 3% of the server's
// processor at 64 connections (measured when the view was a Go map; the table that replaced it
// was not measured at that size).
const commitViewBound = 1 << 14

// pruneStep is how many heads writing one may forget: more than one, so that the view shrinks
// back to its bound after the index caught up.
const pruneStep = 8

func newCommitView() *commitView {
	v := &commitView{slots: make([]*commitHead, 2*commitViewBound), bound: commitViewBound}
	v.root.next, v.root.prev = &v.root, &v.root
	return v
}

func (v *commitView) slot(hash uint64) **commitHead { return &v.slots[hash&uint64(len(v.slots)-1)] }

// get returns the head of k, whose hash is hash.
func (v *commitView) get(k StreamKey, hash uint64) (*commitHead, bool) {
	for ch := *v.slot(hash); ch != nil; ch = ch.chain {
		if ch.hash == hash && ch.key == k {
			return ch, true
		}
	}
	return nil, false
}

// touch reads the slot of each group's stream hash, the first head there and the first byte of
// its stream id, and returns a sum of what it read. The look-ups of a record's streams then find
// those in the processor's caches: each one otherwise waits for memory three times in a row
// (slot, head, id), while these reads do not depend on one another, so the processor waits for
// them together.
func (v *commitView) touch(groups []recGroup) uint64 {
	var sum uint64
	for i := range groups {
		if ch := *v.slot(groups[i].hash); ch != nil {
			sum += ch.hash
			if id := ch.key.ID; id != "" {
				sum += uint64(id[0])
			}
		}
	}
	return sum
}

func (v *commitView) len() int { return v.n }

// add puts a head for k, whose hash is hash and which the view must not hold, as the most
// recently written, and returns its entry.
func (v *commitView) add(k StreamKey, hash uint64, h head) *commitHead {
	if v.n == len(v.slots) {
		v.resize(2 * len(v.slots))
	}
	var ch *commitHead
	if n := len(v.free); n > 0 {
		ch, v.free = v.free[n-1], v.free[:n-1]
		*ch = commitHead{head: h, key: k, hash: hash}
	} else {
		ch = &commitHead{head: h, key: k, hash: hash}
	}
	sl := v.slot(hash)
	ch.chain, *sl = *sl, ch
	v.n++
	v.pushBack(ch)
	return ch
}

// resize moves the heads to a table of n slots (a power of two): twice as many for a view above
// its bound while the log's fsyncs lag, half as many once prune has forgotten most of them. Both
// pass over the table under the commit lock, as often as the view doubles or halves.
func (v *commitView) resize(n int) {
	old := v.slots
	v.slots = make([]*commitHead, n)
	for _, ch := range old {
		for ch != nil {
			next := ch.chain
			sl := v.slot(ch.hash)
			ch.chain, *sl = *sl, ch
			ch = next
		}
	}
}

// remove takes ch out of its slot's chain.
func (v *commitView) remove(ch *commitHead) {
	for p := v.slot(ch.hash); *p != nil; p = &(*p).chain {
		if *p == ch {
			*p, ch.chain = ch.chain, nil
			v.n--
			return
		}
	}
}

// written sets ch's head and makes it the most recently written.
func (v *commitView) written(ch *commitHead, h head) {
	ch.head = h
	v.unlink(ch)
	v.pushBack(ch)
}

// prune forgets up to pruneStep of the least recently written heads while the view is above its
// bound, stopping at the first whose record readers cannot see yet (lsn above published). A table
// that grew is halved once it is a quarter full, down to twice the bound (a new view's size):
// halving at half full would double it again at the next add.
func (v *commitView) prune(published uint64) {
	for i := 0; i < pruneStep && v.n > v.bound; i++ {
		oldest := v.root.next
		if oldest == &v.root || oldest.lsn > published {
			break
		}
		v.unlink(oldest)
		v.remove(oldest)
		if len(v.free) < freeMax {
			// Its strings go now, not when it is taken again.
			*oldest = commitHead{}
			v.free = append(v.free, oldest)
		}
	}
	if len(v.slots) > 2*v.bound && v.n <= len(v.slots)/4 {
		v.resize(len(v.slots) / 2)
	}
}

func (v *commitView) pushBack(ch *commitHead) {
	ch.prev, ch.next = v.root.prev, &v.root
	v.root.prev.next = ch
	v.root.prev = ch
}

func (v *commitView) unlink(ch *commitHead) {
	ch.prev.next, ch.next.prev = ch.next, ch.prev
	ch.prev, ch.next = nil, nil
}
