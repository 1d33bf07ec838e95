// Package storage keeps the event streams of one (instance, environment) on top of the segment
// log in package wal: atomic multi-stream commits with optimistic concurrency, stream ids, per
// stream hash chains, a bbolt index for lengths, positions and listing, stream rewrites for
// erasure, aggregate snapshots, a record space for engine data (with physical erasure of old
// values), and NDJSON export and import.
//
// # Layout
//
//	dir/log/          the log (package wal): the only source of truth
//	dir/index.db      bbolt index, derived from the log (index_codec.go lists its buckets)
//	dir/index.db.vacuum  the copy an index vacuum (Erase) writes before renaming it over index.db
//	dir/snapshots/    one file per stream with its latest aggregate snapshot, derived
//
// # Records
//
// Every Commit is one log record (record_codec.go draws the format) holding all of its appends,
// to any number of streams, and its record-space puts and deletes: after any crash all of it is
// there or none of it. Each record has an lsn, unique and increasing in log order; stream ids
// and lsns are assigned under one lock together with the wal.Write call, so log order, lsn order
// and stream-id order agree.
//
// A Put marked IfAbsent only needs its key live. Commit drops it when a record already in the log
// (durable, or ahead of this one in log order, which is as good) made the key live with an
// IfAbsent put and no delete followed: the store remembers such keys (a bounded set of two
// generations, the older dropped when the newer fills, empty at open; live.go) and checks them
// again under the commit lock, so a delete that comes in between makes the commit write the put
// after all. References from actors to the streams they write, put again by every write to a
// type whose tombstone rules read them, are the case it is for.
//
// A Put with Stream set (an ordered put) is encoded with 16 zero digits in its key, which the
// commit lock replaces with the stream's first timestamp, as it fills in stream ids and hashes;
// the log holds the complete key, so the index, a rebuild and an erasure see an ordinary key.
// The tombstone references use it: keys of new streams then go to the end of an entity's range
// instead of to random places of the index.
//
// # Invariants
//
//   - OCC inside the commit: every expectation is compared, under the commit lock, with a commit
//     view of the stream heads that includes commits not yet durable, so two racing writers
//     cannot both win.
//   - Stream ids "<ms>-<seq>" strictly increase per store, even when the clock steps back (the
//     last id's millisecond is kept and its sequence incremented).
//   - Hash chains: h_0 = 32 zero bytes, h_i = SHA-256(h_{i-1} || ContentHash(event_i)); each
//     event's h_i is stored in its record and in the index. ContentHash documents canonical(event).
//   - The index is derived: applying the log's records in order to an empty index (Rebuild) gives
//     the index the store maintains, up to the numbers streams get, how many of their names
//     have been merged into the names bucket, and in which runs, where the runs of a stream's
//     events begin and which of them wait in the tails (tail_runs.go), and which streams' heads
//     have a key of their own beside their entry in a run of heads; Check verifies this and
//     every chain.
//   - Erasure is real: Rewrite returns after the records that held the old events are gone from
//     every file of the log, the stream's snapshot is deleted and the read cache evicted. Erase
//     returns after the records that held any older value of its record-space keys are gone from
//     the log and index.db has been rewritten without the free pages that held those values
//     (bbolt frees pages without clearing them; the index stores events' positions, never their
//     bytes, so only record-space values need this).
//
// # Durability
//
// Commit returns after the record is fsynced (group commit: concurrent commits share one write and
// one fsync) and visible to reads. A commit alone (none in flight, and one record in the last
// group published) writes, fsyncs and publishes its record in its own goroutine, waking neither
// the log's flusher nor the publisher (await; wal's doc says what that saves). Options.NoSync
// disables fsync, for tests and benchmarks only.
// The index is not fsynced per commit: a background indexer applies durable records to bbolt in
// batches (up to 65,536 entries, counting a record's positions, its events and its space keys;
// after each transaction it pauses twice as long as the transaction took, from 300 ms to 1 s,
// unless a full batch is waiting or a reader waits for the index), one transaction per batch with
// the applied watermark in it (one for all the waiting batches, up to four, when it is behind), and
// until then reads find them in an in-memory overlay (overlay.go: one generation per batch, dropped
// whole once bbolt holds it). Spacing the transactions keeps bbolt's page rewrites and fsyncs from
// crowding the log's fsyncs, and lets a batch share the pages it touches; a transaction also puts
// its keys in key order. The log's fsyncs still slow down while a transaction is written (each
// flushes the disk's cache, index pages included, most likely): over orders to 10,000 inventory
// streams, 288 of the 318 log fsyncs above 3 ms in a 24 s run fell inside index transactions,
// which filled 38% of it; with the indexer's thread at I/O class idle, 271 (one run each). Runs
// appended to streams written before now wait in the tails bucket and reach their streams' pages
// once per eight transactions (tail_runs.go), which halved the pages written there. Once the
// overlay holds 16 batches' worth of entries, a commit (or a rewrite job's carry) waits for the
// indexer before it is written, so a write load the indexer cannot keep up with slows writers
// down instead of growing memory without bound.
// Snapshots are never fsynced; a torn one reads as absent.
//
// # Recovery
//
// Open lets the log recover its torn tail (corruption elsewhere is an error: see
// wal.IsCorruption), removes the partial copy of an interrupted index vacuum, rebuilds index.db
// if it is missing, unreadable, of an older format, ahead of the log (a log cut by a repair) or
// damaged in what loading it reads (ErrBadIndex: its watermark, the heads of the streams whose
// names are not merged yet, the entries catching up touches, the pending erasure jobs), repairs
// the record positions of a compaction interrupted between the log's rename and the index
// update, applies every record after the watermark, and finishes any erasure a crash
// interrupted.
//
// # Rewrite and compaction
//
// Rewrite appends a rewrite record with the new events and the lsns of the records it
// supersedes. Indexing it stores an erasure job. The job re-appends, as carry records, whatever
// else those records still hold (other streams' events, record-space values), then compacts their
// segments without them. A carry has a new lsn but the precedence (eff) of the record it copies,
// so re-applying it never overrides newer data; this is what keeps "index equals rebuild" true
// whether a crash left the old record, the carry, or both. Every step is idempotent.
//
// Erase works the same way for record-space keys: it finds, by a scan of the log, every record
// that put one of the keys, and appends an erasure record with the keys' new values or deletions
// and those records' lsns as superseded (no events). Its job carries and compacts like a
// rewrite's, then vacuums the index: a copy of index.db's live data (bbolt.Compact), fsynced and
// renamed over it, made while the indexer waits. The job is removed from the new index only
// after the rename, so a crash at any step runs the whole job again at open.
//
// # Concurrency
//
// Every method is safe for concurrent use. The commit lock (Store.mu) covers only in-memory work
// and wal.Write; fsync waits happen outside it: the goroutine that writes a group to the log (its
// flusher, or a lone committer) publishes the group to the overlay in log order as the fsync
// returns (wal.Options.OnDurable) and wakes its committers, each on a channel taken from a pool;
// a publisher goroutine, woken with each group, answers with the error when the log fails. A
// commit whose expectation fails waits until the record it lost to has been published
// (Store.published), so that a conflict reports only lengths readers see. Everything else a
// commit needs happens before the lock: data and metadata that are already canonical
// (canonical.IsCanonical, the common case) are used as they are, without a copy until encoding,
// and a commit of one event allocates its working set (record, offsets, publication state) at once.
// It hashes its streams before the lock too; under the lock it reads the commit view's entries for
// all of them in one pass before looking them up one by one (commitView.touch), so that the
// processor waits for memory once for all of a record's streams instead of once for each, and
// publishing does the same with a generation's streams. The commit view keeps the heads of recently
// written streams and, once it grows past its bound, forgets the least recently written of those
// already in bbolt, a few at each new stream (commit_view.go), so its size follows the write rate,
// not the number of streams, and no commit waits for a pass over it. A stream missing from the
// commit view is searched in bbolt only if the filter of known streams (known_streams.go) may have
// it, so a commit to a new stream searches nothing; the indexer is told which streams had no head
// at all when a record was committed, so it does not search bbolt for them either. The overlay and
// the record cache keep records and a stream's events in windows (window.go), slices that slide
// with the lsns and indexes they hold. A reader finds a stream's number in the recent names
// (recent_names.go) before it begins its bbolt transaction, and in the names bucket's runs
// (name_runs.go) otherwise; the indexer adds new streams to the recent names after their
// transaction commits and before the overlay lets go of them, and empties the set only after a
// transaction that merged it. A failed log write or index write fails the store for good
// (ErrFailed): reopening recovers every acknowledged commit. Readers never take the commit lock:
// they read the overlay under a read lock, bbolt in read transactions, and records from the log or
// the cache. Position lookups are serialized with compaction by compactMu, so a reader can wait for
// the index swap of a compaction, never for a commit. Range looks up the positions of a chunk's
// uncached records in one transaction and uses them only if no compaction has run since (a counter
// under compactMu). A rewrite of the stream a reader is reading may drop the records its index
// entries point to; Range and Event then read those entries again (they point at the rewrite's
// records now) and go on, a few times at most. Every bbolt transaction holds dbMu shared; an index
// vacuum (Erase only) holds it exclusively just to close, rename and reopen the file. Range calls
// its callback outside every lock. Decoded records that reads load are kept in a bounded cache
// keyed by lsn (a record's bytes never change for its lsn), so replaying a recently read stream
// costs no system call.
//
// EventStore is the narrow interface the engine uses, so that another backend can stand behind it.
package storage
