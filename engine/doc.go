// Package engine composes the data plane of one j17 server: for every (instance, environment)
// it opens the event store, holds the deployed spec, and runs the write and read pipelines of
// the feature packages (write, read, cache, snapshot, idempotency) over them.
//
// # Composition
//
// An Engine opens one storage.Store per (instance, environment) lazily, at the first request,
// under DataDir/<instance-uuid>/<env>/, and loads that pair's current spec from the control
// store. The compiled spec (with its identifier rules, per-type handlers, snapshot fingerprints
// and cache rule) is held in an atomic.Pointer: every request takes one immutable model for its
// whole run, and SpecDeployed swaps in the next one, never going back to an older version. The
// feature packages see the store only through storage.EventStore.
//
// # Implications and scheduled events
//
// A write runs a chain of write hooks (writeHooks, in write.go: implications, schedule
// cancels, sagas) over its record before the commit; a hook that has nothing to do for a plan
// says so (idleHook), and a write whose hooks are all idle keeps the write package's cheapest
// path. The implication hook expands the triggers with engine/implication against S0 (each
// stream's state before the request, from the cache or a fold, read only for the event types
// whose implications use "@"; a write whose triggers' chains read no state is, like one without
// implications, appended without internal OCC) and adds the implied events as
// appends of their own streams, and each schedule as a record-space put (engine/schedule); the
// cancel hook adds a canceled marker for every pending schedule whose cancel_on matches an event
// of the record. One scheduler goroutine per Engine (started by New, stopped by Close, reading
// time from the clock) polls each open pair's due heap and fires each due schedule as one
// record holding the event, what it implies and the fired marker. A poll's schedules fire side
// by side, those of one target aggregate by one goroutine in fire_at order; a failure is
// counted in the schedule's record and tried again at the next poll, the tenth moves it to
// dead_letter. Each pair's schedule index is rebuilt from its record space when the pair opens,
// and the scheduler opens every pair of DataDir at start.
//
// # Sagas
//
// Every write carries a saga hook: the sagas its events (implied ones included) trigger are
// created in the write's own record, in the record space "saga", with the trigger aggregate's
// state as their snapshot. One runner goroutine per Engine (started by New, stopped by Close,
// reading time from the clock) advances them: each step's event and the saga's next state are
// one record, so a crash loses no progress and repeats no emit. Waiting sagas are indexed by the
// aggregate they await; a commit touching such an aggregate wakes the runner, which reads the
// log after the step's emit, so a reply is found whether it arrived before or after a restart.
// A pair's running sagas load when it opens, and the runner opens every pair of DataDir at start.
//
// # Idempotency keys
//
// A keyed write holds its key's lock (idempotency.Locks) while it reads the marker and commits;
// a marker stops replaying IdempotencyTTL after its last use (24 h by default). One sweeper
// goroutine per Engine (started by New, stopped by Close) deletes the expired markers of every
// open pair every IdempotencySweep: it scans the record space, then deletes in commits of at
// most sweepBatch keys with a pause between them, each batch under its keys' locks and checked
// again there, so that a key renewed meanwhile keeps its marker. A deletion is an ordinary
// commit; a sweep cut short by a crash or Close is finished by the next.
//
// # Invariants
//
//   - One request, one record: a write's events, what they imply, the schedules they create or
//     cancel and its idempotency marker are one commit.
//   - The cache never serves a state computed from another history of the stream, or under
//     another spec (entries are keyed by the model's generation and checked against the O(1)
//     length and last chain hash).
//   - Snapshots and the cache are derived: deleting them changes no answer.
//   - Nothing is acknowledged before the store's commit returned, which is after the fsync.
//   - The limits of 100 pending schedules per aggregate (100,000 per pair) and of 100 running
//     sagas per pair are exact under concurrent writes: a hook reserves its room before the
//     commit (schedule.Index.Reserve, sagaSet.reserve), turns it into entries in the same step
//     that publishes the commit, and gives it back when the write fails (writeHooks.release).
//
// # Concurrency
//
// Every method is safe for concurrent use. The engine's mutex guards only the table of open
// pairs; requests run in parallel on a pair, serialized only per idempotency key and by the
// store's own commit. Close waits only for the background goroutines (scheduler, saga runner,
// idempotency sweeper) to finish their current action; the server stops sending requests first.
package engine
