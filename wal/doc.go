// Package wal is the write-ahead log under storage: numbered segment files of framed records,
// group commit with fsync, rotation, recovery, compaction and repair. It knows nothing of events:
// a record is a kind byte chosen by the caller and an opaque payload.
//
// # Files
//
// A log is a directory of segment files named NNNNNNNN.seg (zero-padded decimal, starting at 1).
// Segments are append-only. The active (last) segment's file is zero-filled ahead of its records
// (Options.Prealloc, see Preallocation); sealing and Close trim it to its records, so a sealed
// segment's size is exactly the end of its last record. The writer rotates to a new segment before
// a record would make the active one exceed Options.SegmentSize (64 MiB by default); a record
// larger than that goes alone into its own segment, so records never straddle files. All segments
// but the last are sealed: immutable until Compact rewrites them. A record's address is its Pos:
// segment number and the offset of its header in that segment. Compaction writes NNNNNNNN.seg.tmp
// and renames it over the segment; Open removes any .seg.tmp left by a crash. Repair leaves its
// copies in repair-NNNN.cut directories, which the log never touches again. A file named LOCK,
// locked (flock) from Open to Close, keeps a second Log, or Repair, out of a directory in use.
//
// # Record frame
//
// Every record is a 10-byte header and the stored payload, little-endian:
//
//	+-------------+-------------+----------+-----------+--- ... ---+
//	| CRC-32C (4) | Length (4)  | Kind (1) | Flags (1) | Payload   |
//	+-------------+-------------+----------+-----------+--- ... ---+
//
// Length counts the stored payload bytes. No record has an all-zero header: with length, kind and
// flags zero the payload is empty and the CRC is 0x572a7c8a, never 0; so zeros where a header
// should be are never a record, which is what lets preallocated space mark the end of the log. The
// CRC is CRC-32C (Castagnoli) over the stored payload followed by the length, kind and flags bytes;
// it leaves out the position, so compaction moves a record by copying it. Flags bit 0 means the
// payload is stored S2-compressed (block format of github.com/klauspost/compress/s2); any other bit
// set makes the record bad. Payloads are at most MaxPayload (1 GiB) before compression. The
// constants in record.go are part of the on-disk format; do not change them.
//
// # Compression
//
// Payloads of at least Options.CompressThreshold bytes (default 512) are compressed with S2, and
// stored raw when that does not make them smaller. The codec and the threshold were chosen by
// BenchmarkCodec on event-shaped JSON (ids, types, timestamps, actors; about 250 bytes per event),
// on the 2-core machine this runs on (best of 3; ratio = stored/raw; times per record):
//
//	size     s2: ratio  encode   decode    zstd fastest: ratio  encode   decode
//	300 B        1.02   0.14 µs  0.01 µs                 0.78   4.4 µs   2.1 µs
//	512 B        0.74   0.29 µs  0.05 µs                 0.58   3.7 µs   1.8 µs
//	1 KiB        0.63   0.49 µs  0.11 µs                 0.44   4.4 µs   2.2 µs
//	4 KiB        0.49   1.7 µs   0.44 µs                 0.29   9.9 µs   3.2 µs
//	64 KiB       0.43   35 µs    12 µs                   0.23   116 µs   44 µs
//
// zstd stores a third fewer bytes, but at 200,000 records a second its encode alone would take
// most of one of the two cores, and its decode is 4 (64 KiB) to 35 (512 B) times slower than S2's,
// which every replay of an aggregate would pay. Below 512 bytes (a single event) S2 saves nothing,
// so such records are stored as they are; from 512 bytes (two events and more) it saves a quarter
// to more than half of the bytes for well under a microsecond.
//
// # Durability
//
// Append (and Pending.Wait) returns only after the record's bytes are on disk: written and fsynced
// (fdatasync) in their segment. A new segment is created only after the previous one is fsynced
// whole and trimmed to its records, and the directory is fsynced after a segment is created or
// removed, so after a crash every segment but the last is complete. Options.NoSync skips every
// fsync and exists for tests and benchmarks only. A failed write or fsync fails the log for good:
// the error is returned to every waiting and later Write, and nothing is retried, because after a
// failed fsync the kernel may have dropped the pages it could not write (fail-stop).
//
// # Preallocation
//
// The flusher zero-fills the active segment with real writes, Options.Prealloc (1 MiB by default)
// past the end of the group write that reaches the filled end, rounded up to 4 KiB, and writes the
// group into that space. The zeros reach the disk with that group's fsync; the groups after it
// overwrite blocks that are allocated and synced, whose fdatasync needs no journal commit for a new
// size or extent. Measured with 20 KB writes on this machine's ext4 (p50 of 400 fdatasyncs, three
// rounds): 205-223 µs after an append that grows the file, 170-190 µs after a write into
// fallocate'd space (its unwritten extents still need converting, a metadata change), 103-111 µs
// after a write into zero-filled and synced space. Hence zero-fill, not fallocate. The cost is one
// slower group per chunk: zero-filling and syncing 1 MiB takes about 1.1 ms, 4 MiB 4-14 ms, so the
// chunk is kept at 1 MiB (about 2,500 events of 400 bytes) to keep that stall near a p99 commit.
//
// Sealing a segment fsyncs it, truncates it to its records and fsyncs it again, all before the
// next segment is created; Close trims the active segment the same way. Recovery (below) takes an
// all-zero rest of the last segment for the normal end and keeps it for the writer.
//
// Measured with BenchmarkCommit of storage (one ~300-byte event per commit) and BenchmarkAppend,
// without preallocation (the committed code, built with go test -c -overlay mapping the changed
// wal files to their committed text and the new ones to nothing) and with it, runs alternated,
// median of 10 runs (Commit) and 6 runs (Append) of 1 s each (events/s, p50, p99, records per
// fsync). The machine was loaded (load average 4 to 4.5 on its 2 cores, other work running), so
// the absolute rates are about half of those in the group commit table:
//
//	                       no preallocation                  preallocation (1 MiB)
//	Commit writers=1       3,240/s  177 µs  2.6 ms    1.0    4,280/s  114 µs  2.5 ms    1.0
//	Commit writers=8      14,500/s  292 µs  4.4 ms    7.7   22,300/s  148 µs  3.8 ms    7.7
//	Commit writers=64     47,400/s  782 µs  9.8 ms   44.3   50,000/s  639 µs   10 ms   39.3
//	Commit writers=256    66,200/s  2.4 ms   27 ms    114   66,600/s  2.2 ms   27 ms     97
//	Append writers=1       5,630/s  145 µs  0.8 ms    1.0    7,490/s  100 µs  1.0 ms    1.0
//	Append writers=8      31,600/s  179 µs  2.3 ms    8.0   56,100/s  109 µs  0.9 ms    8.0
//	Append writers=64    206,000/s  254 µs  1.5 ms     63  317,000/s  127 µs  1.5 ms     63
//	Append writers=256   358,000/s  466 µs  4.8 ms    214  734,000/s  243 µs  1.6 ms    215
//
// Commands (from the repository root; before.json is the overlay):
//
//	go test -c -overlay before.json -o storage-before.test ./storage
//	go test -c -o storage-after.test ./storage          # likewise wal-before.test, wal-after.test
//	cd storage && ../storage-before.test -test.run '^$' -test.bench 'Commit$' -test.benchtime 1s
//	cd storage && ../storage-after.test -test.run '^$' -test.bench 'Commit$' -test.benchtime 1s
//	cd wal && ../wal-before.test -test.run '^$' -test.bench 'Append$' -test.benchtime 1s
//
// In a quieter spell (load average 3.7), 5 alternated runs of writers=64 and 256 only (-test.bench
// 'Commit$/writers=(64|256)/'), preallocation won every pair at 64 committers: 87,200/s, 520 µs,
// 5.4 ms, 42.6 records per fsync without it; 97,600/s, 376 µs, 5.4 ms, 34.8 with it; at 256
// committers 102,000/s, 1.4 ms, 23 ms against 107,000/s, 1.2 ms, 21 ms.
//
// The p50 falls by a third to a half wherever the fsync dominates (one to eight committers, and the
// log alone at any concurrency).
//
// # Group commit
//
// One flusher goroutine writes whatever was queued since its last write as one group: one write
// per segment it touches, then one fsync (fdatasync); only after that fsync does it wake the
// group's waiters. A group is never written while an earlier one is unsynced, so the write of one
// group never overlaps the fsync of the one before, and Wait is never answered early.
//
// The next group is taken as soon as the last one's waiters are woken, however few records it
// holds: while one group is written and fsynced the next fills, so steady concurrent appenders
// settle into cohorts that alternate, each fsync carrying part of them. An earlier flusher
// held the next group open after waking one (gather: until the woken appenders were back, for at
// most half an fsync, yielding the processor in a loop meanwhile). In process it filled groups
// (storage BenchmarkCommit at 8 committers: 7.7 records per fsync against 4.2), but behind the
// HTTP server, where a woken committer comes back only after its answer, the client's next
// request and that request's work, it seldom saw them back in time, and its loop took processor
// time from them. Without it, bench/'s loadgen on 2 cores (three alternated pairs of 8 s runs,
// with and without gather, same build otherwise; writes/s): single-event writes at 1 connection
// 2,209 -> 2,385, 16 connections 15,522 -> 17,259, 64 connections 24,377 -> 30,213, 256
// connections 33,051 -> 37,406; orders implying ten events 7,257 -> 7,455. In process, where
// committers come back within microseconds, gather did help at 8 committers (BenchmarkCommit,
// two alternated runs, events/s: 33,577 and 28,631 with it, 21,946 and 28,041 without), while 64
// and 256 committers stayed within the noise (81,024 and 97,040 against 68,267 and 94,560;
// 103,032 and 109,456 against 95,302 and 110,380). The server is what the log is for, so the
// flusher is tuned for it.
//
// Fuller groups barely move the rate anyway: with a flush of F and a committer's return of R,
// waiting for everyone gives n/(F+R) commits a second at n committers, and not waiting (two
// cohorts, each working while the other's fsync runs) about (n/2)/max(F, R/2); the two are close
// when F ≈ R, and behind HTTP R is well above F. A cheaper fsync raises both: fdatasync after
// overwriting blocks already allocated and synced costs about 110 µs here against 180 µs after an
// append that grows the file, which is what preallocation (above) buys.
//
// A group's fsync also costs processor time, not only waiting: on this virtual machine a write of
// 4 to 16 KiB into preallocated space followed by fdatasync took 127 to 150 µs, 50 to 73 µs of
// them the kernel's time on the caller's thread (getrusage over 2,000 to 3,000 of them in a row);
// an fdatasync with nothing to write took 15 µs of 42. Most of it is submitting the I/O to the
// virtio disk (perf: iowrite16, the queue notification, was 3.5% of both cores under orders of
// ten items). Under orders, which run out of processor, fuller groups would therefore save
// processor time; but neither of two ways of filling them raised the rate, and neither did the
// opposite (bench/'s loadgen, orders to new streams, 3 s runs, alternated sets of three runs;
// in-process figures from BenchmarkImplicationWrite's map10/new case run at 16 writers, a count
// it does not list):
//   - Holding a group back while the store announced commits on their way to Write (counted from
//     Store.Commit, or from the engine's write): in process the groups stayed at 4 to 5 records
//     (30,000 orders: 6,594 groups without, 7,500 and 5,740 with). The committers of the group
//     just made durable are the ones missing, and they come back only after their answers.
//   - A minimum of 400 µs between the starts of two groups (the flusher's thread sleeping in
//     nanosleep with a timer slack of 1 ns; time.Sleep of 50 µs takes about 1 ms here): 7.6
//     records per group instead of 4.2 over a set's requests (its single writes included), and
//     neither orders/s nor processor time per order moved beyond the runs' spread in six
//     alternations (four of them over the catalog too).
//   - A flusher thread at nice -10 (root only) took write and fsync from 233 to 178 µs and
//     OnDurable from 28 to 19 µs (means over a set's groups): groups shrank from 3.0 to 2.6
//     records, and the rate stayed where it was (three alternations).
//
// Without fsync at all (Options.NoSync) the same orders ran about a quarter faster (two
// alternations of two runs: 23% and 34%).
//
// A writer alone needs no flusher. Write wakes the flusher goroutine, which wakes the writer once
// the group is durable; the store's committer then also waited for its publisher goroutine. On a
// virtual machine each such wake-up can cost tens of microseconds (the Go runtime wakes a thread on
// another processor for a goroutine made runnable), and a lone writer pays them all in every
// request. So a writer that knows it is alone (the store: no record in flight before its own, and
// the last group published held one record) uses WriteDeferred, which wakes no one, then Flush:
// with the flusher idle and no group being written, Flush writes and fsyncs the group in the
// caller's goroutine, exactly as the flusher would, and the store's committer publishes its
// record itself. Writers that are not alone wake the flusher as before. Being alone takes the last
// group's size too because concurrent committers drain the pipeline between cohorts: with the
// empty pipeline alone as the test, the first record of a cohort was flushed at once by itself
// and the rest of the cohort waited for that fsync, and 16 and 64 connections lost about a sixth
// of their rate. bench/'s loadgen on 2 cores, alternated 8 s runs, single-event writes over HTTP,
// writes/s without and with: 1 connection 2,538 and 2,495 against 3,648 and 3,597; 16
// connections 19,150 and 17,542 against 19,563 and 17,445; 64 connections 25,033 and 29,368
// against 29,689 and 27,008.
//
// Options.OnDurable takes one more hand-off out of a group's wake-up. The store used to learn that
// a group was durable in its publisher goroutine, woken by the flusher like any waiter, which then
// published the group and woke its committers: on 2 busy cores that goroutine waited its turn to
// run before any committer could. Now whoever wrote the group calls OnDurable as the fsync
// returns, and the store publishes there and wakes the committers itself (storage's publisher
// remains for a failed log). bench/'s loadgen on 2 cores, alternated 8 s runs, without and with
// (four pairs): single-event writes at 16 connections 25,071, 24,797, 25,970 and 26,412 writes/s
// against 26,727, 26,671, 28,078 and 27,153 (in seven more pairs of an earlier build of it, six
// higher, by 3 to 7%); orders implying ten events to new streams 12,727, 12,960, 13,105 and
// 13,454 orders/s against 12,964, 13,152, 13,386 and 13,465. In 6 s runs (three pairs), single
// writes at 1 connection rose 2 to 4%, at 64 connections 0.5 to 1.7%; at 256 connections and for
// orders over a catalog of inventory streams the pairs went both ways, within 4%. A publisher
// that no longer woke with each group (failure handling aside) won nothing more for orders to
// new streams in three pairs.
//
// # Recovery
//
// Open checks every record of every segment. In the last segment, an all-zero rest after the last
// valid record is preallocated space: the normal end, kept as it is. Other bad bytes at the end are
// a torn write (a crash cut the last group short; none of it was acknowledged) and are truncated,
// provided no valid record follows them anywhere in the segment. Anything else is corruption:
// a bad record in a sealed segment, or a bad record in the last segment followed by a valid one.
// Open then fails with a *CorruptionError naming the file and offset, and drops nothing; Repair
// (j17 repair) truncates the log at the first bad record and keeps a copy of what it cut. Two
// cases are judged by that rule and not by what happened: damage to the very last record of the
// last segment is truncated like a torn write, and a crash that kept a later page of the last
// write but not an earlier one is reported as corruption (Repair then cuts exactly the
// unacknowledged tail). The first loses a record only if the disk damaged it; the second never
// loses one. Zeros count as bad bytes here: zeros where a record should be, followed by a valid
// record, are corruption, as when the later page of a write into preallocated space reached the
// disk and the earlier one did not. A torn write into preallocated space leaves non-zero bytes
// before the zeros and is truncated like a torn append (the file shrinks to the last record; the
// writer zero-fills again).
//
// A sealed segment whose records stop before an all-zero run to the end of the file, at a size that
// is a multiple of 4 KiB, is taken for a segment whose trim a crash interrupted, and Open trims it
// (logged as a warning). The writer makes the trim durable before it creates the next segment, so
// a crash cannot leave one; the rule is there for a filesystem that reorders. Any other bad bytes
// in a sealed segment, zeros to an unaligned size included, are corruption as before. Repair
// treats both zero tails as Open does and cuts nothing for them.
//
// # Concurrency
//
// All methods of Log are safe for concurrent use. Write checksums and compresses outside any
// lock, then holds the writer's mutex only to copy the frame into the group being filled; one
// flusher goroutine, or a Flush while it is idle, writes a whole group with one write and one
// fsync and wakes its waiters, each on its own channel (group_commit.go lists the ordering
// guarantees). Readers (Read, Scan) never take the writer's mutex: they load an immutable table
// of segments and the durable end through atomic pointers. Sealed segments are memory-mapped
// and read in place; the active segment's durable prefix is read with pread. Segments are
// reference counted, so a reader that started on a file finishes on its bytes even if Compact
// replaces it meanwhile.
//
// # Compaction
//
// Compact rewrites one sealed segment without the records the caller no longer needs (records
// superseded by later ones; erased payloads): kept records go to a temporary file, which is
// fsynced, renamed over the segment, and the directory fsynced. Afterwards no byte of a dropped
// record remains in any file of the directory. Kept records that moved are reported to the caller,
// which owns the index of positions and must stop handing out the old ones.
package wal
