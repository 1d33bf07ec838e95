// Package idempotency implements the X-Idempotency-Key rules of the Writing Events page: key
// validation, the request fingerprint, the durable marker a successful write leaves, and the
// per-key serialization of concurrent requests.
//
// # How a key is kept
//
// A successful write with a key commits, in the same storage record as its events, a Put of a
// Marker into the record space Space: the SHA-256 of the canonical JSON of the request body, the
// stream and the position its events took, the status and the request id. The answer is not
// stored: it is rebuilt from the marker and the stream ids of those events, so it is byte for
// byte the answer first sent. Because marker and events are one record, a crash leaves both or
// neither, and a retry can never write twice. Failed requests commit nothing, so they are not
// remembered.
//
// # Invariants
//
//   - A key is remembered for TTL (24 hours, or the engine's configured window) after its last
//     use: a replay refreshes it. An expired marker is never replayed; the engine deletes it in
//     the background, and a new write with its key replaces it.
//   - One key, one body: the same key with a body of another fingerprint is refused.
//   - Keys are scoped by the store they live in, one per (instance, environment).
//
// # Concurrency
//
// Locks serializes requests per key in memory, so that two concurrent requests with one key
// cannot both miss the marker and both write; the holder checks the record space, writes and
// releases. Locks is safe for concurrent use; Markers are values.
package idempotency
