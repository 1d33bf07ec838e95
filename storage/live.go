package storage

import "sync"

// liveSet is what Store.live remembers: the record-space keys that IfAbsent puts made live and no
// delete removed since, by space. It keeps the callers' key strings, so remembering a key costs a
// map entry and no copy. Bounded by liveKeysMax: emptied when full.
type liveSet struct {
	sync.RWMutex
	spaces map[string]map[string]struct{}
	n      int
}

// liveKeysMax bounds a liveSet.
const liveKeysMax = 1 << 15

// liveKey names a key a commit relied on being live.
type liveKey struct{ space, key string }

// has reports whether key is known live in space. REQUIRES: l held, for reading at least.
func (l *liveSet) has(space, key string) bool {
	_, ok := l.spaces[space][key]
	return ok
}

// add remembers key as live in space. REQUIRES: l held for writing.
func (l *liveSet) add(space, key string) {
	if l.n >= liveKeysMax {
		clear(l.spaces)
		l.n = 0
	}
	keys := l.spaces[space]
	if keys == nil {
		if l.spaces == nil {
			l.spaces = make(map[string]map[string]struct{})
		}
		keys = make(map[string]struct{})
		l.spaces[space] = keys
	}
	if _, ok := keys[key]; !ok {
		keys[key] = struct{}{}
		l.n++
	}
}

// remove forgets key in space. REQUIRES: l held for writing.
func (l *liveSet) remove(space, key string) {
	if keys := l.spaces[space]; keys != nil {
		if _, ok := keys[key]; ok {
			delete(keys, key)
			l.n--
		}
	}
}
