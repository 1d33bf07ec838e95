// Package snapshot saves aggregate states so that reads of long streams replay only their tail,
// and keeps the operator's checkpoints of the Admin API.
//
// # Snapshots
//
// A snapshot is the state after the first Length events of a stream, saved through the storage
// snapshot API (one per stream, derived data outside the log). It is tagged with Fingerprint, a
// hash of the aggregate type's definition in the spec (handlers included), not with the spec's
// version number: a deploy that changes handlers makes every older snapshot of that type unusable
// at once, while a deploy that leaves the type alone keeps them. Policy says when a read should
// save a new one: every Every events.
//
// # Checkpoints
//
// A checkpoint is a named, operator-made snapshot of one aggregate or of every aggregate of a type
// (a root checkpoint), kept in the record space CheckpointSpace through ordinary commits of puts
// and deletes. Restoring one puts its states back as the streams' snapshots. No checkpoint
// operation appends, rewrites or removes an event: they touch only the record space and the
// derived snapshot files.
//
// # Invariants
//
//   - A snapshot or checkpoint is used only under the fingerprint it was made with and only if
//     the stream is at least as long as the state it holds.
//   - States are stored as their JSON; nothing here interprets them beyond tick.ParseJSON.
//
// # Concurrency
//
// Functions are safe for concurrent use as far as the storage.EventStore is. Two reads may save a
// snapshot of one stream at once; the store's rename keeps one of them whole, and either is valid.
package snapshot
