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
// forgotten, so the view may outgrow its bound while the log's fsyncs lag.
type commitView struct {
	m map[StreamKey]*commitHead
	// root links the list: root.next is the least recently written head, root.prev the most.
	root commitHead
	// bound is the number of heads above which adding one forgets old ones.
	bound int
}

type commitHead struct {
	head
	key        StreamKey
	prev, next *commitHead
}

// commitViewBound keeps about as many heads as 64 writers to fresh streams commit in half a
// second, so that a stream written again within that time is found without a search of the
// overlay and bbolt. Writes to fresh streams only add heads and forget old ones, and a larger map
// costs them more at each step: with 1<<16, the view's map operations took about 3% of the
// server's processor at 64 connections.
const commitViewBound = 1 << 14

// pruneStep is how many heads writing one may forget: more than one, so that the view shrinks
// back to its bound after the index caught up.
const pruneStep = 8

func newCommitView() *commitView {
	v := &commitView{m: make(map[StreamKey]*commitHead), bound: commitViewBound}
	v.root.next, v.root.prev = &v.root, &v.root
	return v
}

func (v *commitView) get(k StreamKey) (*commitHead, bool) {
	h, ok := v.m[k]
	return h, ok
}

func (v *commitView) len() int { return len(v.m) }

// add puts a head for k, which the view must not hold, as the most recently written, and
// returns its entry.
func (v *commitView) add(k StreamKey, h head) *commitHead {
	ch := &commitHead{head: h, key: k}
	v.m[k] = ch
	v.pushBack(ch)
	return ch
}

// written sets ch's head and makes it the most recently written.
func (v *commitView) written(ch *commitHead, h head) {
	ch.head = h
	v.unlink(ch)
	v.pushBack(ch)
}

// prune forgets up to pruneStep of the least recently written heads while the view is above its
// bound, stopping at the first whose record readers cannot see yet (lsn above published).
func (v *commitView) prune(published uint64) {
	for i := 0; i < pruneStep && len(v.m) > v.bound; i++ {
		oldest := v.root.next
		if oldest == &v.root || oldest.lsn > published {
			return
		}
		v.unlink(oldest)
		delete(v.m, oldest.key)
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
