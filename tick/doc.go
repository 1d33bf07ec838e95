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
//     objects behind a pointer to a 64-byte node. Objects are ordered member
//     slices (stable key order, linear lookup, which beats hashing for the
//     small objects events and states hold; an object used as a map of
//     thousands of keys pays for it). A zero Value means "missing", which
//     differs from null.
//   - In a replay, an event's data and metadata are lazy. Decoding validates
//     the whole document with a skip-scan (one loop, open containers kept as
//     bits, strings checked eight bytes at a time) that accepts exactly what
//     ParseJSON accepts, depth limit included, but builds only key, type, id
//     and aggregate_type; data and metadata become nodes over their text. A
//     lookup ("$.data.id", "$.metadata.actor.id") scans the text and builds
//     only its result; merge reads the members straight from it; set and
//     append store the node as it is, so a whole object moved into state
//     costs nothing until something walks into it. Whatever needs the
//     members (Members, Items, Len, Equal, writing JSON, a mutation) parses
//     the text once and publishes the result atomically, since frozen values
//     are shared between goroutines. Objects whose top-level keys were seen
//     to be distinct (and unescaped) let a lookup stop at the first match,
//     and a compact first key needs no walk at all; others scan on, since
//     the last of repeated keys wins.
//   - A stored state (a snapshot) is read by ParseState: its top level is
//     parsed, and every array and object inside it becomes a lazy node
//     marked verbatim, since AppendJSON wrote that text and would write it
//     again byte for byte. Writing such a node copies its text. Appending
//     to a verbatim array parses nothing either: the session gets a node
//     over the same text with a tail of appended items, extended in place
//     while the session owns it and copied (the tail only) by the next;
//     AppendJSON writes the text without its "]", then the tail. Anything
//     else that needs the items parses the text once and adds the tail,
//     and a mutation other than append turns an owned tail node into an
//     ordinary one. Reading a stream of 10,000 events whose state holds an
//     item per event went from 5.4 ms to under 1 (BenchmarkRead, snapshot,
//     p50): most of it had been parsing the snapshot and writing it out
//     again.
//   - ParseJSON and ParseEvent parse eagerly (their callers read the values
//     many times): the input is copied into one string that every unescaped
//     string slices, and nodes, members and items come from chunks allocated
//     per document (the scratch stacks they pass through on the way are
//     pooled and reused). A Replayer instead decodes each event where it lies,
//     in the caller's buffer, and copies text out only when something is
//     to keep it. Every compiled operation records what of the event the
//     values it stores may come from: nothing (literals, the state, the
//     number of an increment), the timestamp (nothing once it was read as
//     a number), the data alone, or the whole event (other members of "$",
//     bindings). The first operation of an event that needs it copies that
//     much into a 16 KiB pointer-free block and points the event at the
//     copy before it evaluates anything; no other code stores into state,
//     so no value in state refers to the caller's buffer. Lazy nodes come
//     from chunks, and those of an event that kept nothing are given back
//     for the next one. A typical replay so copies a fifth of its text and
//     takes a node only for the data it keeps: it allocates once per sixty
//     events, and the collector never scans the text. The price: a string
//     or lazy node kept in state keeps its block, and its chunk, alive.
//   - State changes are copy-on-write with ownership: each mutation session
//     (one Apply, or one Replayer across a whole stream) has a number, and a
//     node carrying that number is changed in place; any other node (lazy
//     nodes are always frozen) is copied first. A replay therefore appends
//     and sets in place, while a state held by a cache or snapshot is never
//     modified. Values stored into state are frozen so that no node is
//     reachable from two places while mutable.
//   - Paths are compiled into segment slices, with the first member of "$"
//     (data, metadata, key, ...) resolved at compile time, and "$.data" and
//     paths of fields alone under data or metadata ("$.data.x",
//     "$.metadata.actor.id") marked for a direct lookup that reads members
//     where they lie and copies out only the result; operations are
//     structs switched on an op code; literal subtrees are folded; a $merge
//     result is allocated once at its final size, in a box of exactly that
//     many members up to four.
//   - Keys, and the strings that upsert and remove where match, are
//     compared inline: length first, then whether both are the same bytes
//     (keys written from one compiled name), then loads of fixed size,
//     without a call. The evaluators keep the common cases (literals,
//     paths, $merge; set, merge, append, increment, remove, upsert, if)
//     apart from the rest so that these run in small frames.
//   - metadata.timestamp, which handlers read and stamping reads again, is
//     read once per event: a run caches it on first use, and a replay takes
//     it while decoding when it is the compact first member of the metadata,
//     as stored events have it. A replay also keeps the created_at its last
//     stamp wrote, which is the state's before the next event.
//
// Measured on one core of the shared two-core machine, against the eager
// design that preceded this one: BenchmarkReplay (10,000 events of 286
// bytes) went from 12.5 to 17 ms of CPU per replay to 6.1 to 6.7 (the spread
// is the machine's load), 0.05 allocations per event instead of 3. Most of
// what was left went to the collector: the replay copied all its text and
// took two lazy nodes an event, 5 MB a replay. Copying only what is kept and
// giving nodes back (above) cut that to 1.4 MB and 0.017 allocations an
// event; with three smaller changes (reading eight digits of a number at
// once, not stopping the string scan at non-ASCII bytes, and matching the
// items of upsert and remove where on their text while they are still
// text) a replay takes 4.8 ms of CPU (median of 8 runs interleaved with
// the old code, which took 6.35 under the same load; 4.6 to 5.1 across
// runs), under the 5 ms target. Counted with callgrind, a replay takes
// 8,100 instructions an event (9,700 before), and 7,400 with the collector
// off (7,550): decoding and validating about 4,300, the operations, lookups
// in text and stamping about 2,550, the rest copying and bookkeeping. The
// code itself is little cheaper; what was saved is the collector's work.
//
// BenchmarkTick (decoded events, order management) was unchanged by this:
// 5.8 to 6.0 million operations per CPU second with a Replayer, 7.1 million
// for the operations alone, short of its 10 million. Several changes that
// cut instructions made these benchmarks slower in CPU time and were left
// out: storing Values field by field to dodge the bulk write barrier
// (which every Value stored into the heap goes through while the collector
// marks), a per-replay cache of where targets were found, tagging event
// types for dispatch, and handing out $merge results from slabs (one
// allocation per sixteen objects instead of one each). What is kept of
// that idea: a store that changes nothing (a Replayer's state handed back
// to itself) is skipped, and where only a number changes (stamps,
// increments) the number alone is written, which needs no barrier. Both
// benchmarks report CPU-time metrics because the machines are shared.
//
// Profiled then, the operations alone spent a fifth of their time
// resolving paths, a sixth matching items by field and a quarter building
// the $merge note object, and most of the cost was calls: every lookup went
// through Get, which takes and returns whole Values, and every key or
// string compare of equal lengths called the runtime's memequal. What was
// done, counted with callgrind (collector off) for the operations alone, in
// instructions an event: comparing keys inline, and splitting the hot
// evaluators from the cold, 1,830 to 1,765; resolving field paths and the
// timestamp where the values lie, with the member loop written out, to
// 1,665; remove where with a fixed predicate and upsert matching items in
// place (no binding, no Value copied in or out) to 1,565; literal operands
// without a call, find left inlinable with ==, and the timestamp lookup
// written out, to 1,515 (a sixth fewer). A Replayer went from 2,400 to
// 2,030. In CPU time, medians of 8 runs interleaved with the old code:
// 7.2 to 10.7 million operations per second for the operations alone and
// 6.0 to 8.1 million with a Replayer while the machine was quiet, 6.4 to
// 9.2 and 5.4 to 7.6 under load. Boxing $merge results at their exact
// size cut the bytes allocated a twelfth, within the noise in time. The
// note object itself stays: append stores it, so something reads it.
// Looking up the timestamp first thing in a Replayer, to overlap its cache
// misses with the operations, was slower and was left out. What is left:
// the collector (about a seventh of the CPU time, the note objects and the
// notes array being nearly all that is allocated), the first touch of each
// decoded event's data and metadata, which misses the cache, and the
// Value-returning call chain of evaluation (eval, Resolve, operand), where
// every layer copies a 40-byte Value. BenchmarkReplay is unchanged by
// this, within the noise.
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
