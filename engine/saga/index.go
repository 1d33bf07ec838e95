package saga

import (
	"sort"
	"sync"
)

// Key names an awaited aggregate.
type Key struct{ Type, ID string }

// Index maps awaited aggregates to the sagas waiting on them, so that a committed event finds
// its sagas without looking at any other.
type Index struct {
	mu sync.Mutex
	m  map[Key]map[string]struct{} // protected by mu
}

// Add records that saga id waits on k.
func (x *Index) Add(k Key, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[Key]map[string]struct{}{}
	}
	set := x.m[k]
	if set == nil {
		set = map[string]struct{}{}
		x.m[k] = set
	}
	set[id] = struct{}{}
}

// Remove forgets that saga id waits on k.
func (x *Index) Remove(k Key, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.m[k], id)
	if len(x.m[k]) == 0 {
		delete(x.m, k)
	}
}

// Has reports whether a saga waits on k.
func (x *Index) Has(k Key) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.m[k]) > 0
}

// Lookup returns the sagas waiting on k, sorted.
func (x *Index) Lookup(k Key) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := make([]string, 0, len(x.m[k]))
	for id := range x.m[k] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
