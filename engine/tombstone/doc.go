// Package tombstone carries out GDPR erasure as the Tombstones page describes it: tombstone
// requests with a grace period, transitive discovery through onTombstone rules, and the rewrite of
// every affected stream into "_was_tombstoned" markers.
//
// # Records
//
// A tombstone is one JSON value in the store's record space "tombstones", keyed by its id. Its
// status moves pending -> executing -> completed, or pending -> cancelled. The actor and target
// index lives in the space "refs": a write puts, in the same record as its events, one empty
// value per (role, referenced entity, stream) for the roles in which the stream's type cascades
// (onTombstone), keyed
//
//	<role> 0x00 <ref type> 0x00 <ref id> 0x00 <stream type> 0x00 <first timestamp> 0x00 <stream id>
//
// (role "actor" or "target"), so that discovery is one prefix scan per cascading role and type
// instead of a read of every stream. The store fills in the stream's first timestamp (16 hex
// digits, storage.Put.Stream) so that an entity's references to new streams are put one after
// another at the end of its range, not at random places of the index; keys from before that
// hold no timestamp and are read all the same.
//
// Discovery reads no other reference, so writes carry no other: a spec without cascade rules
// costs its writes nothing here. The index of a (role, type) is complete only if every spec
// version deployed to the environment cascaded in it (the engine answers Env.RefsComplete from
// the control plane's versions); where it is not (a rule added after the first deploy, a version
// that no longer loads), discovery reads every event of the type's streams instead, as the
// Tombstones page describes it. Streams written before the index existed are found only there.
//
// # Invariants
//
//   - The grace period is never shorter than 72 hours; execution before it ends needs force.
//   - Execution is resumable: entering executing records, in one put, the pre-tombstone root, the
//     start time (which becomes every marker's tombstoned_at) and the list of streams to rewrite.
//     Each rewritten stream is then recorded as done. Executing again after a crash at any step
//     skips what is recorded, rewrites the rest, and reaches the same final state: a marker is
//     kept unchanged by a later rewrite, so rewriting an erased stream again changes no byte.
//   - Rewrites go through storage.Rewrite, which returns only after the old bytes are gone from
//     the log files and the stream's snapshot is dropped. The copies of a stream's payload kept
//     in the record space (checkpoint states, scheduled-event data, saga triggers) are erased by
//     Env.Purge through storage.Store.Erase before the stream is recorded as done, so completed
//     means that no byte of an erased payload remains in any file of the data directory.
//
// # Concurrency
//
// Functions are safe for concurrent use on distinct tombstones; the caller serializes execution
// (the engine holds one lock for all executions, which are rare).
package tombstone
