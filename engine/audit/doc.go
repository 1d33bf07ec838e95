// Package audit answers the cryptographic questions of the Admin API about one (instance,
// environment): does a stream's hash chain verify, what is its Merkle root, what is the inclusion
// proof of one event and does a proof hold, and root anchors, the roots over every stream root
// that are kept to check the log against later.
//
// # Invariants
//
//   - A stream's Merkle root is the RFC 6962 tree whose leaves are the stream's chain values
//     h_1..h_n (storage.Hashes), so a proof binds an event to its whole prefix.
//   - Indexes in answers are 0-based: leaf i is event i+1 of the stream.
//   - An anchor stores every stream's key, length and root next to the root over them
//     (merkle.AnchorRoot), so a later check names each stream that changed. A stream rewritten by
//     a tombstone still reproduces its anchored root: its markers keep the old chain values in
//     data.chain_hash, which are the old leaves.
//   - Anchors and settings live in the store's record space (spaces "anchors" and
//     "anchor_settings"), so they are as durable as the events and travel with the log.
//
// # Concurrency
//
// Every function is safe for concurrent use; each reads the store through its own calls. An
// anchor is a cut of stream lengths taken one stream at a time, not an atomic snapshot: a write
// racing CreateAnchor lands either before a stream's length was read or after it.
package audit
