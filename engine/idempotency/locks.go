package idempotency

import "sync"

// Locks serializes requests per key. Entries live only while someone holds or waits for them,
// so the table's size follows the number of keys in flight.
type Locks struct {
	mu   sync.Mutex
	keys map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// Lock waits until no other request holds key and returns the function that releases it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.keys == nil {
		l.keys = map[string]*keyLock{}
	}
	k := l.keys[key]
	if k == nil {
		k = &keyLock{}
		l.keys[key] = k
	}
	k.refs++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		k.refs--
		if k.refs == 0 {
			delete(l.keys, key)
		}
		l.mu.Unlock()
	}
}
