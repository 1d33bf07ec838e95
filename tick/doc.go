// Package tick is j17's declarative handler language: JSON values, the
// JSONPath subset, predicates, the seventeen operations and the templates of
// implications and sagas. It is pure: no I/O, no clock, nothing else of the
// project. Everything is compiled once (at spec deploy) and then evaluated
// many times (on every read and write).
//
// # Representation, and why
//
// A read replays a stream: each stored event is decoded from JSON and folded
// into the state by its handler. The target is about 0.5 µs per 300-byte
// event for both; encoding/json into map[string]any alone takes several µs.
// So:
//
//   - Value is a 40-byte struct passed by value: scalars inline, arrays and
//     objects behind a pointer to a node. Objects are ordered member slices
//     (stable key order, linear lookup, which beats hashing for the small
//     objects events and states hold; an object used as a map of thousands
//     of keys pays for it). A zero Value means "missing", which differs from
//     null.
//   - ParseJSON is our own parser: the input is copied into one string that
//     every unescaped string slices, and nodes, members and items come from
//     chunks allocated per document, so a typical event costs a handful of
//     allocations. Nesting is bounded by MaxDepth (128). The price: a string
//     kept in state keeps its event's text alive.
//   - State changes are copy-on-write with ownership: each mutation session
//     (one Apply, or one Replayer across a whole stream) has a number, and a
//     node carrying that number is changed in place; any other node is
//     copied first. A replay therefore appends and sets in place, while a
//     state held by a cache or snapshot is never modified. Values stored
//     into state are frozen so that no node is reachable from two places
//     while mutable.
//   - Paths are compiled into segment slices, with the first member of "$"
//     (data, metadata, key, ...) resolved at compile time; operations are
//     structs switched on an op code; literal subtrees are folded; a $merge
//     result is allocated once at its final size.
//
// What remains costly in a replay, and keeps it above that target, is the
// parse itself (per string and per member, not per byte: strings are
// scanned eight bytes at a time) and the garbage collector tracing the values
// the state keeps; both grow with the number of members an event carries.
// BenchmarkReplay and BenchmarkTick measure them, with CPU-time metrics
// because the machines are shared.
//
// # Semantics decided here
//
//   - Handler values: a string starting with "$" (or "@" followed by ".",
//     "[" or "?") is a path; objects and arrays are evaluated member by
//     member; {"$merge": [...]} (skipping unresolvable or non-object
//     elements) and {"$": path}. A missing non-optional path is ErrNotFound;
//     an optional one ("?") that is missing makes the operation a no-op, or
//     drops its key inside an object.
//   - Templates add concat, coalesce and merge; "?" also drops a key whose
//     value is null. concat writes numbers and booleans as JSON, skips null,
//     and rejects arrays and objects.
//   - "@" is the state as the operations change it; "$.state" is the state
//     before the event in a handler (the Handlers page) and an alias of "@"
//     in implications and sagas.
//   - Predicates read a missing path as null and never fail on absent data;
//     gt/gte/lt/lte order two numbers or two strings and nothing else; exists
//     is true for any value, null included; every over a missing array is
//     true, some false. No type coercion anywhere: "123" != 123.
//   - Operations: increment/decrement take "by" (alias "value", default 1)
//     and start from 0; append, append_unique, upsert, set_at, merge_at and
//     increment_at create what they need; remove, filter, map, update_where
//     and remove_at do nothing on a missing target; a target of the wrong
//     type is ErrType. upsert removes every item whose match field equals the
//     value and appends the new value, as documented. let binds the first
//     match (or nothing) for the rest of the handler.
//   - Apply runs the operations and then Stamp, the automatic created_at
//     (kept from the state before, or this event's metadata.timestamp on the
//     first event) and updated_at; the engine calls Apply or a Replayer, both
//     of which stamp. Run is the operations alone. A Replayer skips events
//     whose type has no handler, as the reader does.
//
// Compile-time limits: MaxOperations (100 per handler, counting nested
// operations), MaxNesting (5 levels of if/map operation lists),
// MaxPredicateDepth (32), MaxMergeDepth (16), MaxTemplateDepth (32). Every
// compile problem is reported at once as Errors, each with a JSON Pointer.
//
// # Concurrency
//
// Compiled Handlers, Predicates, Templates and Paths are immutable and safe
// for concurrent use. Values returned by this package are frozen and may be
// shared between goroutines. A Replayer, and a Scope while it is evaluated,
// belong to one goroutine.
package tick
