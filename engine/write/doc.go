// Package write is the write pipeline of the Writing Events, Batch Operations and Atomicity
// pages: it checks a request against the spec, builds the events to store, and commits them
// with optimistic concurrency.
//
// # Pipeline
//
// Prepare checks, in the order of the Spec page's "validation at event write": the aggregate
// type, the event type (reserved "_" types refused), the body's shape, the aggregate key, the
// actor (agent_types or system_agent, and the identifier rule or the system agent allowlist),
// the target, the concurrency options and metadata.timestamp, and each event's data against its
// schema, straight from the request bytes. It returns a Plan: the stream, the events with their
// stored metadata ({"actor", "target"?, "timestamp"}), and how the commit checks the length.
// The body is checked as JSON once; its members (and those of metadata and of actor and target)
// are then picked out by a scanner that matches names as encoding/json does (ASCII case
// ignored, the last duplicate winning) and leaves names with escapes or non-ASCII bytes to the
// decoder. A Plan's data is a copy: the caller may reuse the body's buffer once Prepare returns.
//
// Commit turns a Plan into one storage.Record and commits it. Internal OCC reads the length and
// expects it (one retry on a conflict, then 409) whenever the record depends on what was read:
// implied events computed from the state, or an idempotency marker that names the events'
// position; a record that depends on nothing appends at the end, since no interleaving can make
// it stale. Storage reports a conflict only once the commit that won is visible, so the retry's
// length read sees it. External OCC expects previous_length (a conflict is final); skip_occ
// appends without a check. Extra puts (an idempotency marker) ride in the same record. The
// record is where implications belong: an Expander adds the appends of implied events to other
// streams before the commit, so a trigger and everything it implies stay one record. Without an
// Expander, a trigger whose event type declares implications is refused rather than written
// without them.
//
// # Invariants
//
//   - Nothing is written unless every check passed: one request, one record.
//   - Every refusal is a *problem.Error with the contract's kind, message, path and event index.
//   - Stored data is the client's data unchanged but for canonical form; stored metadata holds
//     only actor, target and timestamp, with normalized identifiers.
//
// # Concurrency
//
// Prepare is pure. Commit is safe for concurrent use; its OCC is the store's, checked inside
// the commit, so two racing writers can never both win.
package write
