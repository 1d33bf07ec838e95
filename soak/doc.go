// Package soak runs the bounded soak test of `make soak`: it starts the real j17 binary on
// loopback with a temporary data directory, drives it with mixed reads, writes, batches,
// idempotent retries and implications, kills it with SIGKILL at a fixed period and restarts it,
// and after every restart checks that nothing acknowledged was lost.
//
// # Invariants checked
//
//   - Every acknowledged write (a 201) is present after any number of crashes: its stream holds
//     an event with each stream id the answer gave, carrying the data that was sent, and the
//     stream is at least as long as the acknowledged events of it.
//   - No write is applied twice: each event's data carries a nonce, and no nonce appears twice.
//   - Every acknowledged order placement has its implied event in the singleton ledger.
//   - Every stream's hash chain verifies (the verify-chain route) after every restart, and
//     `j17 verify` accepts the whole data directory after the final, graceful stop. It is not run
//     between a SIGKILL and the restart: opening the stores would recover them before the server
//     does, which is the very recovery under test.
//   - No request gets an unexpected status while the server is up. A 409 conflict on a write
//     without previous_length is documented (internal OCC retries once, then answers 409): it is
//     counted, and an idempotent write is sent again with its key.
//
// # Concurrency
//
// Ledger is safe for concurrent use: the workers record into it while a check reads a snapshot.
// Run owns the server process; workers only read its current address.
package soak
