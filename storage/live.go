package storage

import "sync"

// liveSet is what Store.live remembers: the record-space keys that IfAbsent puts made live and no
// delete removed since, by space. It keeps the callers' key strings, so remembering a key costs a
// map entry and no copy.
//
// It remembers them in two generations: keys are added to the current one, and when that holds
// liveGenMax keys it becomes the previous one, the previous one's keys being forgotten. A key
// known only to the previous generation that a commit relies on again moves to the current one,
// so a working set of up to liveGenMax keys stays known however many other keys come and go. A
// set that was emptied whenever it filled (at 32,768 keys) forgot them all at once: an order over
// a catalog of 10,000 inventory streams, from 16 actors, found almost none of its 10 references
// live and wrote them all again, scattered over the index (with two generations, the indexer's
// share of the server's processor in that scenario went from 41% to 24%).
//
// The key of an ordered put (Put.Stream) is complete only under the commit lock, so such a key is
// known by Put.Key and the stream instead. The complete key holds the stream's id but not its
// type, so a delete cannot tell which of those it ends; it forgets all of its space's instead,
// which only costs a few puts written again.
type liveSet struct {
	sync.RWMutex
	cur, prev liveGen
}

// liveGenMax bounds each generation of a liveSet. Two full generations of references take about
// 45 MB.
const liveGenMax = 1 << 17

// liveGen is one generation of a liveSet.
type liveGen struct {
	spaces  map[string]map[liveName]struct{}
	ordered map[string]map[liveName]struct{} // the keys of ordered puts, by space
	// prefixes holds one copy of each ordered put's Key: the references of one actor to streams
	// of one type share their Key, which would otherwise keep a string per stream alive.
	prefixes map[string]string
	n        int
}

// liveKey names a key a commit relied on being live: a key, or, with stream set, the key an
// ordered put with that Key and Stream completes.
type liveKey struct {
	space string
	liveName
}

// liveName is a key within its space.
type liveName struct {
	key    string
	stream StreamKey
}

// liveKeyOf names the key of p, which is complete if complete is set (see Put.Stream).
func liveKeyOf(p *Put, complete bool) liveKey {
	key := p.Key
	if complete && p.Stream != (StreamKey{}) {
		key = key[:len(key)-len(p.Stream.ID)-orderedKeyTail]
	}
	return liveKey{p.Space, liveName{key, p.Stream}}
}

func (g *liveGen) bySpace(k liveKey) map[string]map[liveName]struct{} {
	if k.stream != (StreamKey{}) {
		return g.ordered
	}
	return g.spaces
}

func (g *liveGen) has(k liveKey) bool {
	_, ok := g.bySpace(k)[k.space][k.liveName]
	return ok
}

func (g *liveGen) add(k liveKey) {
	spaces := g.bySpace(k)
	if spaces == nil {
		spaces = make(map[string]map[liveName]struct{})
		if k.stream != (StreamKey{}) {
			g.ordered = spaces
		} else {
			g.spaces = spaces
		}
	}
	names := spaces[k.space]
	if names == nil {
		names = make(map[liveName]struct{})
		spaces[k.space] = names
	}
	if k.stream != (StreamKey{}) {
		if g.prefixes == nil {
			g.prefixes = make(map[string]string)
		}
		if p, ok := g.prefixes[k.key]; ok {
			k.key = p
		} else {
			g.prefixes[k.key] = k.key
		}
	}
	if _, ok := names[k.liveName]; !ok {
		names[k.liveName] = struct{}{}
		g.n++
	}
}

// empty forgets every key and keeps the maps: maps dropped here were grown again from nothing,
// rehash after rehash (3% of the server's processor under implied writes to new streams).
func (g *liveGen) empty() {
	for _, spaces := range [...]map[string]map[liveName]struct{}{g.spaces, g.ordered} {
		for _, names := range spaces {
			clear(names)
		}
	}
	clear(g.prefixes)
	g.n = 0
}

func (g *liveGen) remove(space, key string) {
	if names := g.spaces[space]; names != nil {
		if _, ok := names[liveName{key: key}]; ok {
			delete(names, liveName{key: key})
			g.n--
		}
	}
	if names := g.ordered[space]; len(names) > 0 {
		g.n -= len(names)
		clear(names)
	}
}

// has reports whether k is known live. REQUIRES: l held, for reading at least.
func (l *liveSet) has(k liveKey) bool { return l.cur.has(k) || l.prev.has(k) }

// len is how many keys l remembers, counting a key known to both generations twice.
func (l *liveSet) len() int { return l.cur.n + l.prev.n }

// add remembers k as live in the current generation. REQUIRES: l held for writing.
func (l *liveSet) add(k liveKey) {
	if l.cur.has(k) {
		return
	}
	if l.cur.n >= liveGenMax {
		l.prev.empty()
		l.cur, l.prev = l.prev, l.cur
	}
	l.cur.add(k)
}

// remove forgets key in space, and every ordered put's key of the space (see liveSet).
// REQUIRES: l held for writing.
func (l *liveSet) remove(space, key string) {
	l.cur.remove(space, key)
	l.prev.remove(space, key)
}
