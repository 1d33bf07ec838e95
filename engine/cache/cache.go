package cache

import (
	"hash/maphash"
	"sync"

	"github.com/j17-go/j17/tick"
)

// Entry is a computed aggregate state.
type Entry struct {
	// Length is the number of events the state folds and Hash the stream's chain value at that
	// length: together they say which history the state belongs to, even across a rewrite.
	Length uint64
	Hash   [32]byte
	// State is the state as a frozen value; JSON is its encoding.
	State tick.Value
	JSON  []byte
}

// entryOverhead approximates the bookkeeping of an entry beyond its JSON: the map slot, list
// links, the key, and the tick.Value nodes, which take about as much as the JSON again.
const entryOverhead = 160

func cost(key string, e *Entry) int64 { return int64(len(key) + 2*len(e.JSON) + entryOverhead) }

const shardCount = 16

// Cache is a byte-bounded LRU map from keys to Entries.
type Cache struct {
	seed   maphash.Seed
	shards [shardCount]shard
}

type shard struct {
	mu     sync.Mutex
	items  map[string]*node
	head   node // sentinel of the recency list: head.next is the most recent
	used   int64
	budget int64
}

type node struct {
	key        string
	entry      Entry
	cost       int64
	prev, next *node
}

// New returns a cache of at most budget bytes; a budget of 0 or less keeps nothing.
func New(budget int64) *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		s := &c.shards[i]
		s.items = map[string]*node{}
		s.head.next, s.head.prev = &s.head, &s.head
		s.budget = budget / shardCount
	}
	return c
}

func (c *Cache) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)%shardCount]
}

// Get returns the entry of key and marks it recently used.
func (c *Cache) Get(key string) (Entry, bool) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.items[key]
	if n == nil {
		return Entry{}, false
	}
	s.unlink(n)
	s.pushFront(n)
	return n.entry, true
}

// Put stores e under key, replacing any entry, and evicts the least recently used entries until
// the shard is within its budget.
func (c *Cache) Put(key string, e Entry) {
	s := c.shard(key)
	cst := cost(key, &e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.items[key]; old != nil {
		s.remove(old)
	}
	if cst > s.budget {
		return
	}
	n := &node{key: key, entry: e, cost: cst}
	s.items[key] = n
	s.pushFront(n)
	s.used += cst
	for s.used > s.budget {
		s.remove(s.head.prev)
	}
}

// Delete drops the entry of key.
func (c *Cache) Delete(key string) {
	s := c.shard(key)
	s.mu.Lock()
	if n := s.items[key]; n != nil {
		s.remove(n)
	}
	s.mu.Unlock()
}

// DeletePrefix drops every entry whose key starts with prefix.
func (c *Cache) DeletePrefix(prefix string) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, n := range s.items {
			if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
				s.remove(n)
			}
		}
		s.mu.Unlock()
	}
}

// Used returns the bytes the entries take, by the cache's own accounting.
func (c *Cache) Used() int64 {
	var total int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		total += s.used
		s.mu.Unlock()
	}
	return total
}

func (s *shard) remove(n *node) {
	s.unlink(n)
	delete(s.items, n.key)
	s.used -= n.cost
}

func (s *shard) unlink(n *node) {
	n.prev.next, n.next.prev = n.next, n.prev
}

func (s *shard) pushFront(n *node) {
	n.prev, n.next = &s.head, s.head.next
	s.head.next.prev = n
	s.head.next = n
}
