// Package spec loads a j17 spec: it parses the uploaded document, validates all of it, and
// compiles it into an immutable Spec that the engine consults on every write and read.
//
// # Loading
//
// Load accepts the bare document or the {"spec": {...}} wrapper and reports every problem at
// once, each with a JSON Pointer into the upload, the line and column of that place, and a
// message that says how to fix it. Warnings (deprecated modules.cache, singleton naming
// conventions, cache lists naming unknown types) never block a deploy. What is checked:
//
//   - structure: required keys, types, unknown keys at every level, duplicate keys;
//   - agent_types non-empty, without the reserved system_ prefix;
//   - event schemas through engine/schema (the keyword rules of the JSON Schema page), and no
//     schema on reserved "_" event types;
//   - handlers, predicates, templates and paths through tick (operations, required fields,
//     nesting at most 5, at most 100 operations per event type);
//   - implications: emit templates whose targets the spec declares, map, schedule (delay or
//     delay_ms between 5 minutes and 1 year, cancel_on), pipeline, the wasm short and long forms,
//     binary_container and runtime_container; static implication cycles;
//   - sagas (at most 50 steps, await requires timeout_ms), onTombstone, geo_types and geo,
//     modules, and projections in the shape of the Projections guide ([*] only in source ids).
//
// WASM handlers and implications and the two container kinds are validated and compiled, then
// refused by one rule (rejectUnsupported) because this binary cannot run them yet.
//
// The compiled Spec holds the compiled schemas, handlers, predicates and templates, and the
// static implication graph (Implies), which Load checks for cycles and walks to mark the event
// types whose implications, or those of the events they imply, read the state
// (Event.ChainReadsState): only their writes need the state before the request.
//
// CheckCompat compares a deployed spec with a new one and lists the blocked changes of the Spec
// page, recursing through nested object schemas; force is honoured only outside prod.
//
// # Invariants
//
// A Spec is never mutated after Load returns: its maps, slices and compiled schemas, handlers,
// predicates and templates are only read. Load copies the upload, so the caller may reuse its
// buffer. Every input is bounded: MaxSpecBytes, a JSON nesting limit, and the limits above.
//
// # Concurrency
//
// Load and CheckCompat are safe to call from any goroutine. A Spec may be read by any number of
// goroutines; the engine publishes the current one through an atomic.Pointer and a deploy swaps
// in a new Spec rather than changing the old one.
package spec
