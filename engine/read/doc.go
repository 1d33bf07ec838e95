// Package read computes aggregate states from their streams and writes the answers of the read
// routes of the Reading Aggregates page as JSON.
//
// Fold replays a range of a stream through the aggregate type's handlers onto a starting state
// (the empty state, or a snapshot): each stored event is laid out once as the event object the
// handlers see ({"key", "type", "data", "metadata"}) in a reused buffer and parsed once by tick.
// FoldAt replays only the events whose metadata.timestamp is at or before a given time, for
// ?at=T. The Append functions write answers by appending bytes, never through a generic encoder.
//
// # Invariants
//
//   - Replay reads only immutable bytes of the store (storage.Range), never its commit path.
//   - A state handed in is never modified (tick's copy-on-write); the state returned is frozen
//     and may be shared, by the cache among others.
//   - Events of types without a handler are counted and skipped, as the reader of the docs does.
//
// # Concurrency
//
// Every function is safe for concurrent use; nothing is shared between calls.
package read
