// Package cache keeps computed aggregate states in memory under a byte budget, evicting the
// least recently used entries first.
//
// An entry records the stream length and last chain hash its state was computed at. The engine
// serves an entry only when the stream's current length and hash (an O(1) lookup) still equal
// them, so a cached read is never staler than a replay, even after an erasure rewrote the stream; writes and spec deploys also drop entries (Delete, Clear), which frees
// their memory early. Entries hold the state as a tick.Value, for the write path, and its JSON,
// so that a cached read encodes nothing.
//
// # Invariants
//
//   - The sum of the costs of the entries never exceeds the budget (an entry larger than a
//     shard's share is not kept).
//   - Values are frozen tick.Values and immutable byte slices: readers share them freely.
//
// # Concurrency
//
// Safe for concurrent use. Keys are spread over shards, each with its own mutex and its own
// share of the budget, so readers of different aggregates rarely meet on a lock.
package cache
