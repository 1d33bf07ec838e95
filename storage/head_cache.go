package storage

// headCache keeps, from one index transaction to the next, the heads of streams that existed
// before the transaction that touched them, as that transaction committed them. Appends to
// streams written before (orders reserving stock on a catalog's inventory streams) would
// otherwise look every such head up in bbolt again in each transaction: a seek in the names
// bucket and one in the heads, 3.6% of the server's processor time under bench/'s orders over a
// catalog of 10,000 streams. Heads of streams a transaction numbered are left out, so that
// writes to new streams, which never look one up again in a later transaction, do not churn it.
//
// Invariants: only the indexer writes heads, and only in transactions of indexTx; an entry is
// added or replaced only after its transaction committed (indexTx.committed), so it is always
// the head bbolt holds. Entries hold no pointers, so that the collector does not scan them: keys
// are copied into one buffer. Protected by Store.idxMu, like the indexer's scratch.
type headCache struct {
	entries map[uint64]cachedHead // by the stream's hash (knownStreams.hashKey)
	keys    []byte                // every entry's stream key, type 0 id, back to back
}

// headCacheMax bounds the entries; reaching it empties the cache, which the next transactions
// fill again with the heads they look up. A catalog of 10,000 streams fits many times over.
const headCacheMax = 1 << 16

type cachedHead struct {
	head
	only        eventRef // while the stream has one event
	keyAt, keyN uint32   // the stream's key in headCache.keys
}

// get fills h (keyed k, hashed hash) from the cache and reports whether it held the head.
func (c *headCache) get(hash uint64, k StreamKey, h *txHead) bool {
	e, ok := c.entries[hash]
	if !ok || !c.keyIs(e, k) {
		return false
	}
	// As lookupHead reads a head from bbolt.
	h.head = e.head
	if h.Length == 1 {
		h.only = e.only
	} else {
		h.bucketEnd = h.Length
	}
	return true
}

// keyIs reports whether e is the head of k: streams whose hashes collide share an entry, the
// last one kept.
func (c *headCache) keyIs(e cachedHead, k StreamKey) bool {
	key := c.keys[e.keyAt : e.keyAt+e.keyN]
	return len(key) == len(k.Type)+1+len(k.ID) && string(key[:len(k.Type)]) == k.Type &&
		key[len(k.Type)] == 0 && string(key[len(k.Type)+1:]) == k.ID
}

// keep records the heads of a committed transaction.
func (c *headCache) keep(heads []*txHead) {
	if c.entries == nil {
		c.entries = make(map[uint64]cachedHead, len(heads))
	}
	for _, h := range heads {
		e, ok := c.entries[h.hash]
		if !ok || !c.keyIs(e, h.key) {
			if len(c.entries) >= headCacheMax {
				clear(c.entries)
				c.keys = c.keys[:0]
			}
			e.keyAt = uint32(len(c.keys))
			c.keys = streamKeyBytes(c.keys, h.key)
			e.keyN = uint32(len(c.keys)) - e.keyAt
		}
		// A head keeps where its only event is while it has one; after that, only is stale.
		e.head, e.only = h.head, eventRef{}
		if h.Length == 1 {
			e.only = h.only
		}
		c.entries[h.hash] = e
	}
}
