// Package soak runs the bounded soak test of `make soak`: it starts the real j17 binary on
// loopback with a temporary data directory, drives it with mixed reads, writes, batches,
// idempotent retries, implications, scheduled events and sagas, kills it with SIGKILL at a fixed
// period and restarts it, and after every restart checks that nothing acknowledged was lost and
// nothing happened twice.
//
// # Invariants checked
//
//   - Every acknowledged write (a 201) is present after any number of crashes: its stream holds
//     an event with each stream id the answer gave, carrying the data that was sent, and the
//     stream is at least as long as the acknowledged events of it.
//   - No write is applied twice: each event's data carries a nonce, and no nonce appears twice.
//   - Every acknowledged order placement has its implied event in the singleton ledger.
//   - No scheduled event fires twice. Schedules are fired early by run_due calls of the workers
//     (staging accepts them), which race each other and the kills; at the end every pending one
//     is fired, and each acknowledged schedule must have fired exactly once, none dead-lettered.
//   - No saga emits a step, or its completion, twice. Each saga's first step awaits an event the
//     workers write once the saga has asked for it; at the end every acknowledged saga must have
//     completed, each step and the completion emitted exactly once.
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
