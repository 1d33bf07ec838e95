package storage

import "sync"

// liveSet is what Store.live remembers: the record-space keys that IfAbsent puts made live and no
// delete removed since, by space. It keeps the callers' key strings, so remembering a key costs a
// map entry and no copy. Bounded by liveKeysMax: emptied when full, keeping its maps' memory.
//
// The key of an ordered put (Put.Stream) is complete only under the commit lock, so such a key is
// known by Put.Key and the stream instead. The complete key holds the stream's id but not its
// type, so a delete cannot tell which of those it ends; it forgets all of its space's instead,
// which only costs a few puts written again.
type liveSet struct {
	sync.RWMutex
	spaces  map[string]map[liveName]struct{}
	ordered map[string]map[liveName]struct{} // the keys of ordered puts, by space
	n       int
}

// liveKeysMax bounds a liveSet.
const liveKeysMax = 1 << 15

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

func (l *liveSet) bySpace(k liveKey) map[string]map[liveName]struct{} {
	if k.stream != (StreamKey{}) {
		return l.ordered
	}
	return l.spaces
}

// has reports whether k is known live. REQUIRES: l held, for reading at least.
func (l *liveSet) has(k liveKey) bool {
	_, ok := l.bySpace(k)[k.space][k.liveName]
	return ok
}

// add remembers k as live. REQUIRES: l held for writing.
func (l *liveSet) add(k liveKey) {
	if l.n >= liveKeysMax {
		// Empty the sets of names and keep them: a set dropped here was grown again from nothing,
		// rehash after rehash, by the next liveKeysMax adds (3% of the server's processor under
		// implied writes to new streams).
		for _, spaces := range [...]map[string]map[liveName]struct{}{l.spaces, l.ordered} {
			for _, names := range spaces {
				clear(names)
			}
		}
		l.n = 0
	}
	spaces := l.bySpace(k)
	if spaces == nil {
		spaces = make(map[string]map[liveName]struct{})
		if k.stream != (StreamKey{}) {
			l.ordered = spaces
		} else {
			l.spaces = spaces
		}
	}
	names := spaces[k.space]
	if names == nil {
		names = make(map[liveName]struct{})
		spaces[k.space] = names
	}
	if _, ok := names[k.liveName]; !ok {
		names[k.liveName] = struct{}{}
		l.n++
	}
}

// remove forgets key in space, and every ordered put's key of the space (see liveSet).
// REQUIRES: l held for writing.
func (l *liveSet) remove(space, key string) {
	if names := l.spaces[space]; names != nil {
		if _, ok := names[liveName{key: key}]; ok {
			delete(names, liveName{key: key})
			l.n--
		}
	}
	if names := l.ordered[space]; len(names) > 0 {
		l.n -= len(names)
		clear(names)
	}
}
