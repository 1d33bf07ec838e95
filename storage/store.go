package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// Store is the event store of one (instance, environment). It is safe for concurrent use.
type Store struct {
	dir   string
	opts  Options
	log   *slog.Logger
	clock func() time.Time
	wal   *wal.Log
	db    *bolt.DB
	ov    *overlay
	cache *recordCache
	// names holds the names of the indexed streams that the names bucket does not have yet;
	// only the indexer changes it (recent_names.go).
	names *recentNames

	// mu serializes the commit path: lsn and stream-id assignment, OCC and chain hashing against
	// the commit view, and the wal.Write that fixes log order. Nothing slow happens under it.
	mu struct {
		sync.Mutex
		heads   *commitView // protected by mu: commit view, including commits not yet durable
		lsn     uint64      // protected by mu: last assigned lsn
		lastSID StreamID    // protected by mu: last assigned stream id
		closed  bool        // protected by mu
		touched uint64      // protected by mu: what commitView.touch read, kept so that its reads stay
	}
	// live holds the keys that IfAbsent puts made live and no delete removed since, so that later
	// IfAbsent puts of them can be dropped. It changes only in writeLocked, under mu and its own
	// lock; Commit reads it before taking mu, under the read lock, and checks what it relied on
	// again under mu.
	live liveSet
	// known says which streams may have a head, so that a commit to a new stream need not
	// search the index for one (known_streams.go).
	known    *knownStreams
	scanStop chan struct{}
	scanDone chan struct{}

	// qmu guards inflight: records written to the log, in lsn order, not yet published to the
	// overlay; and published, the lsn of the last record readers can see. Lock order: mu, then
	// qmu.
	qmu       sync.Mutex
	inflight  []*applied // protected by qmu
	published uint64     // protected by qmu
	lastGroup int        // records published together last time; protected by qmu
	// visible is published, for the commit path, which reads it without qmu.
	visible atomic.Uint64
	// pubCond, on qmu, is broadcast each time the publisher is done with a group of records.
	pubCond *sync.Cond

	active    sync.WaitGroup // records between their wal.Write and their publication
	pubSignal chan struct{}
	pubMu     sync.Mutex // held by publishDurable
	pubStop   chan struct{}
	pubDone   chan struct{}
	failed    atomic.Pointer[error]

	// compactMu is held shared while a record position is looked up and read, and exclusively
	// while a compaction moves records and the index is updated to match.
	compactMu sync.RWMutex
	// compactions counts the compactions that moved records, so that a position looked up
	// before one is not used after it. Protected by compactMu.
	compactions uint64
	// rewriteMu runs one rewrite or erasure (and its compactions) at a time.
	rewriteMu sync.Mutex
	// dbMu is held shared around every transaction on db, and exclusively while an index vacuum
	// swaps the file under it (vacuum.go). Lock order: compactMu, then dbMu.
	dbMu sync.RWMutex
	// idxMu is held by the indexer for each transaction, and by an index vacuum while it copies
	// the file, so that no write is lost between the copy and the swap.
	idxMu      sync.Mutex
	idxScratch indexScratch // protected by idxMu
	idxHeads   headCache    // protected by idxMu

	indexed     atomic.Uint64 // lsn of the last record in bbolt
	indexSignal chan struct{}
	flushNow    chan struct{} // cuts the indexer's pause short
	indexStop   chan struct{}
	indexDone   chan struct{}
	flushMu     sync.Mutex
	flushCond   *sync.Cond
	// behind is set from the first commit that waits for the indexer (awaitIndexRoom) until the
	// overlay is down to half its bound, so that the log says once when commits start waiting and
	// once when the indexer has caught up.
	behind atomic.Bool

	// stepHook, set only by tests before any erasure or read starts, runs at each durable step of
	// an erasure job (recorded, carried, compacted, copied, vacuumed), where tests copy the files
	// to reopen them as a crash there would leave them, in Range once it has looked up record
	// positions ahead (hinted) and in Event once it has read the index entry (entry), where tests
	// move or drop the records.
	stepHook func(step string)
	// publishHook, set only by tests (holding pubMu: the log's writer or the publisher may be on
	// its way to publish records of earlier commits), runs in publishDurable with pubMu held,
	// once it has taken records to publish and before readers see them; tests block in it to
	// keep them unseen.
	publishHook func()
}

func (s *Store) hook(step string) {
	if s.stepHook != nil {
		s.stepHook(step)
	}
}

// Open opens (creating it if needed) the store in dir: the log in dir/log, the index in
// dir/index.db, snapshots in dir/snapshots. It recovers as doc.go describes.
func Open(dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	s := &Store{
		dir: dir, opts: opts, log: opts.logger(), clock: opts.clock(),
		cache:       newRecordCache(opts.CacheBytes),
		names:       newRecentNames(),
		indexSignal: make(chan struct{}, 1),
		flushNow:    make(chan struct{}, 1),
		pubSignal:   make(chan struct{}, 1),
		pubStop:     make(chan struct{}),
		pubDone:     make(chan struct{}),
		indexStop:   make(chan struct{}),
		indexDone:   make(chan struct{}),
		known:       newKnownStreams(),
		scanStop:    make(chan struct{}),
		scanDone:    make(chan struct{}),
	}
	s.ov = newOverlay(s.known.hashKey)
	s.mu.heads = newCommitView()
	s.flushCond = sync.NewCond(&s.flushMu)
	s.pubCond = sync.NewCond(&s.qmu)
	wo := walOptions(opts)
	// Whoever writes a group publishes it as its fsync returns, and so wakes its committers
	// itself (see publisher).
	wo.OnDurable = func() { s.publishDurable(nil) }
	w, err := wal.Open(filepath.Join(dir, "log"), wo)
	if err != nil {
		return nil, fmt.Errorf("storage: open log: %w", err)
	}
	s.wal = w
	if err := s.openIndex(); err != nil {
		s.closeFiles()
		return nil, err
	}
	var wm watermark
	if err := s.view(func(tx *bolt.Tx) (err error) { wm, err = readWatermark(tx); return err }); err != nil {
		s.closeFiles()
		return nil, err
	}
	s.mu.lsn, s.mu.lastSID = wm.lsn, wm.lastSID
	s.published = wm.lsn
	s.visible.Store(wm.lsn)
	s.indexed.Store(wm.lsn)
	go s.indexer()
	go s.publisher()
	go s.scanKnownStreams()
	if err := s.runJobs(); err != nil {
		s.Close()
		return nil, fmt.Errorf("storage: resume erasure: %w", err)
	}
	return s, nil
}

// scanKnownStreams adds every stream of the index to s.known, then makes it answer. It reads the
// heads in short transactions, so that it never holds a remap of the index off for long;
// a key the index gains meanwhile comes from a commit, which adds it itself. If a read fails, the
// filter stays unready and commits keep searching the index.
func (s *Store) scanKnownStreams() {
	defer close(s.scanDone)
	next := uint64(1) // the number of the first stream not scanned yet
	for {
		select {
		case <-s.scanStop:
			return
		default:
		}
		var hashes []uint64
		err := s.view(func(tx *bolt.Tx) error {
			return forEachHead(tx, next, func(no uint64, v []byte) error {
				hashes = append(hashes, s.known.hashIndexKey(headKey(v)))
				next = no + 1
				if len(hashes) == knownScanBatch {
					return errStopHeads
				}
				return nil
			})
		})
		if err != nil {
			s.log.Warn("storage: listing the streams for the commit path failed; new streams are looked up in the index", "err", err)
			return
		}
		s.known.addHashes(hashes...)
		if len(hashes) < knownScanBatch {
			s.known.ready.Store(true)
			return
		}
	}
}

// knownScanBatch is the number of stream keys scanKnownStreams reads per transaction.
const knownScanBatch = 4096

// indexMmapSize is how much of index.db bbolt maps from the start. bbolt remaps as the file
// outgrows its mapping, doubling it up to 1 GiB; a remap waits for every read transaction and
// holds off new ones (commits reading a stream head stall behind it), and it copies every node
// of the open write transaction. Mapping 256 MiB up front spares a growing index the dozen remaps
// below that size; it takes address space, not memory, as pages cost nothing until read. With
// BenchmarkCommit (64 committers, the index growing to ~150 MB) it removed 5 of 20 allocations
// per commit.
const indexMmapSize = 256 << 20

func boltOptions(noSync bool) *bolt.Options {
	return &bolt.Options{Timeout: 5 * time.Second, NoSync: noSync, NoFreelistSync: true, FreelistType: bolt.FreelistMapType, InitialMmapSize: indexMmapSize}
}

// openIndex opens index.db, rebuilding it when it is missing, unreadable or damaged (see
// loadIndex for the other cases), repairs interrupted compactions and catches up from the
// watermark.
func (s *Store) openIndex() error {
	path := filepath.Join(s.dir, "index.db")
	// A vacuum copy left by a crash was never installed; the erasure job that made it runs again.
	if err := os.Remove(path + vacuumSuffix); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("storage: remove interrupted index vacuum: %w", err)
	}
	db, err := bolt.Open(path, 0o644, boltOptions(s.opts.NoSync))
	if err != nil && !errors.Is(err, bolt.ErrTimeout) {
		s.log.Warn("storage: index unreadable, rebuilding from the log", "err", err)
		if rmErr := os.Remove(path); rmErr != nil && !os.IsNotExist(rmErr) {
			return fmt.Errorf("storage: remove unreadable index: %w", rmErr)
		}
		db, err = bolt.Open(path, 0o644, boltOptions(s.opts.NoSync))
	}
	if err != nil {
		return fmt.Errorf("storage: open index: %w", err)
	}
	s.db = db
	err = s.loadIndex(path)
	if errors.Is(err, ErrBadIndex) {
		// The index is derived from the log, which the log's checksums vouch for: start over,
		// as for an index that bbolt cannot open. A log that gives a bad index again fails.
		s.log.Warn("storage: index damaged, rebuilding it from the log", "err", err)
		s.names = newRecentNames()
		if err = s.recreateIndex(path); err == nil {
			err = s.loadIndex(path)
		}
	}
	return err
}

// loadIndex makes the open index current: it rebuilds one of another format or ahead of the
// log, loads the recent names, catches up with the log and reads the pending erasure jobs.
func (s *Store) loadIndex(path string) error {
	db := s.db
	if err := db.Update(createBuckets); err != nil {
		return err
	}
	var format uint64
	if err := db.View(func(tx *bolt.Tx) error { format = formatOf(tx); return nil }); err != nil {
		return err
	}
	ahead := false
	if format == indexFormat {
		if err := repairCompactions(db, s.wal); err != nil {
			return fmt.Errorf("storage: repair interrupted compaction: %w", err)
		}
		var err error
		if ahead, err = indexAhead(db, s.wal); err != nil {
			return fmt.Errorf("storage: compare index with log: %w", err)
		}
	}
	if format != indexFormat || ahead {
		if ahead {
			// The log lost records the index knows (it was cut by a repair): start over.
			s.log.Warn("storage: index is ahead of the log, rebuilding it")
		} else {
			s.log.Warn("storage: index has an older format, rebuilding it from the log", "format", format, "want", indexFormat)
		}
		if err := s.recreateIndex(path); err != nil {
			return err
		}
		db = s.db
	}
	if err := loadRecentNames(db, s.names); err != nil {
		return fmt.Errorf("storage: read recent stream names: %w", err)
	}
	n, err := catchUp(db, s.wal, s.names, s.opts.tuning())
	if err != nil {
		return fmt.Errorf("storage: index catch-up: %w", err)
	}
	if err := checkJobs(db); err != nil {
		return fmt.Errorf("storage: read pending erasures: %w", err)
	}
	// Every read of a stream's runs and every index transaction reads the tails' state: a
	// damaged one is rebuilt here rather than failing them all.
	if err := db.View(func(tx *bolt.Tx) error { _, err := readTailState(tx.Bucket(bucketMeta)); return err }); err != nil {
		return fmt.Errorf("storage: read the tails' state: %w", err)
	}
	if n > 0 {
		s.log.Info("storage: index caught up from the log", "records", n)
	}
	return nil
}

// recreateIndex replaces the open index with an empty one of the current format.
func (s *Store) recreateIndex(path string) error {
	s.db.Close()
	s.db = nil
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("storage: remove stale index: %w", err)
	}
	db, err := bolt.Open(path, 0o644, boltOptions(s.opts.NoSync))
	if err != nil {
		return fmt.Errorf("storage: open index: %w", err)
	}
	s.db = db
	return db.Update(createBuckets)
}

// indexAhead reports whether the last record the index applied is missing from the log.
func indexAhead(db *bolt.DB, w *wal.Log) (bool, error) {
	var wm watermark
	var pos wal.Pos
	var found bool
	err := db.View(func(tx *bolt.Tx) (err error) {
		if wm, err = readWatermark(tx); err != nil {
			return err
		}
		pos, found, err = recordsOf(tx).get(wm.lsn)
		return err
	})
	if err != nil || wm.lsn == 0 {
		return false, err
	}
	if !found {
		return true, nil
	}
	_, payload, err := w.Read(pos)
	if errors.Is(err, wal.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	lsn, err := recordLSN(payload)
	return err != nil || lsn != wm.lsn, nil
}

// errStopScan ends a wal.Scan early.
var errStopScan = errors.New("stop scan")

// loadRecentNames fills r with the names of the streams numbered above the watermark's named
// count, read from their heads.
func loadRecentNames(db *bolt.DB, r *recentNames) error {
	return db.View(func(tx *bolt.Tx) error {
		var es []nameEntry
		err := forRecentHeads(tx, func(key []byte, no uint64) error {
			sk, err := parseStreamKey(key)
			if err != nil {
				return err
			}
			es = append(es, nameEntry{sk, no})
			return nil
		})
		if err != nil {
			return err
		}
		r.add(es)
		return nil
	})
}

// forRecentHeads calls fn with the stream key (type 0 id) and number of every head numbered
// above the watermark's named count: the streams whose names are not in the names bucket yet.
func forRecentHeads(tx *bolt.Tx, fn func(key []byte, no uint64) error) error {
	wm, err := readWatermark(tx)
	if err != nil {
		return err
	}
	return forEachHead(tx, wm.named+1, func(no uint64, v []byte) error { return fn(headKey(v), no) })
}

// catchUp applies every durable record after the watermark, in transactions of a few thousand.
// recent holds the names of the streams numbered above the watermark's named count.
func catchUp(db *bolt.DB, w *wal.Log, recent *recentNames, tuning indexTuning) (int, error) {
	var wm watermark
	if err := db.View(func(tx *bolt.Tx) (err error) { wm, err = readWatermark(tx); return err }); err != nil {
		return 0, err
	}
	// bbolt keeps a transaction's dirty nodes unsplit until commit, so an insert costs in
	// proportion to what the transaction already wrote: transactions stay small, counted in
	// entries as the background indexer's are (indexBatch).
	const batch = 16384
	// Decoded records carry no stream hashes: any one function hashes them all alike.
	hashKey := newKnownStreams().hashKey
	var tx *bolt.Tx
	var x *indexTx
	n, inTx := 0, 0
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := x.finish()
		if err == nil {
			if err = tx.Commit(); err == nil {
				x.committed()
			}
		} else {
			tx.Rollback()
		}
		tx, x, inTx = nil, nil, 0
		return err
	}
	err := w.Scan(wal.Pos{Seg: wm.seg}, func(pos wal.Pos, kind uint8, payload []byte) error {
		if kind != kindRecord {
			return fmt.Errorf("%w: unknown kind %d at %s", ErrBadRecord, kind, pos)
		}
		lsn, err := recordLSN(payload)
		if err != nil {
			return err
		}
		if lsn <= wm.lsn {
			return nil
		}
		r, err := unmarshalRecord(payload)
		if err != nil {
			return fmt.Errorf("record at %s: %w", pos, err)
		}
		if tx == nil {
			if tx, err = db.Begin(true); err != nil {
				return err
			}
			if x, err = newIndexTx(tx, nil, recent, tuning, hashKey); err != nil {
				return err
			}
		}
		if err := x.apply(r, pos); err != nil {
			return err
		}
		n++
		inTx += r.indexEntries()
		if inTx >= batch {
			return commit()
		}
		return nil
	})
	if err != nil {
		if tx != nil {
			tx.Rollback()
		}
		return n, err
	}
	return n, commit()
}

// repairCompactions finishes the index side of a compaction that a crash interrupted: the
// segment's records may have moved, so their positions are read again from the segment itself.
func repairCompactions(db *bolt.DB, w *wal.Log) error {
	return db.Update(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketCompacting)
		ri := recordsOf(tx)
		var segs [][]byte
		var drops [][]uint64
		if err := cb.ForEach(func(k, v []byte) error {
			segs = append(segs, append([]byte(nil), k...))
			drops = append(drops, unmarshalLSNs(v))
			return nil
		}); err != nil {
			return err
		}
		for i, k := range segs {
			seg := uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3])
			seen := make(map[uint64]bool)
			err := w.Scan(wal.Pos{Seg: seg}, func(pos wal.Pos, kind uint8, payload []byte) error {
				if pos.Seg != seg {
					return errStopScan
				}
				lsn, err := recordLSN(payload)
				if err != nil {
					return err
				}
				seen[lsn] = true
				return ri.put(lsn, pos)
			})
			if err != nil && !errors.Is(err, errStopScan) {
				return err
			}
			// A dropped record that the segment no longer holds is gone; records of the same job
			// in other segments are left for the job to compact.
			for _, l := range drops[i] {
				if seen[l] {
					continue
				}
				pos, ok, err := ri.get(l)
				if err != nil {
					return err
				}
				if !ok || pos.Seg != seg {
					continue
				}
				if err := ri.remove(l); err != nil {
					return err
				}
			}
			if err := cb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close waits for commits in flight, writes the rest of the index and closes the files.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.mu.closed = true
	s.mu.Unlock()
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	s.active.Wait()
	close(s.scanStop)
	<-s.scanDone
	close(s.pubStop)
	<-s.pubDone
	close(s.indexStop)
	<-s.indexDone
	return s.closeFiles()
}

func (s *Store) closeFiles() error {
	var errs []error
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	errs = append(errs, s.wal.Close())
	return errors.Join(errs...)
}

// fail puts the store in the failed state for good.
func (s *Store) fail(err error) {
	wrapped := fmt.Errorf("%w: %w", ErrFailed, err)
	if s.failed.CompareAndSwap(nil, &wrapped) {
		s.log.Error("storage: store failed; reopen it to recover", "err", err)
	}
	s.flushMu.Lock()
	s.flushCond.Broadcast()
	s.flushMu.Unlock()
}

func (s *Store) failure() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// publisher makes durable records visible to readers, in log order, and then releases their
// committers. It waits for the oldest record in flight; once that returns, every record below the
// log's durable end is durable too (the log fsyncs in order), so the whole group is published at
// once and each committer is woken exactly once, without a lock convoy.
//
// The log's writer (the flusher, or a lone committer's Flush) has usually published the group
// already by the time the publisher wakes: it calls publishDurable as the group's fsync returns
// (wal.Options.OnDurable), before it wakes the group's waiters, the publisher among them. That
// spares each group the wait for one more goroutine to be scheduled before its committers are
// released, which on 2 busy cores is tens of microseconds. The publisher stays for what the hook
// never sees: a log that fails, whose waiters it answers with the error, and records that such a
// log refused at Write.
func (s *Store) publisher() {
	defer close(s.pubDone)
	for {
		s.qmu.Lock()
		var first *applied
		if len(s.inflight) > 0 {
			first = s.inflight[0]
		}
		s.qmu.Unlock()
		if first == nil {
			select {
			case <-s.pubSignal:
				continue
			case <-s.pubStop:
				return
			}
		}
		s.publishDurable(first.pending.Wait())
	}
}

// publishDurable publishes, in log order, the records at the front of inflight that are durable,
// or fails every record in flight if err (from waiting for a record's fsync) is not nil, and
// releases their committers. The log's writer, the publisher and a committer whose record was
// alone may call it at once: pubMu makes them take and apply the records one after the other, so
// the overlay gets them in order and each exactly once; the one that finds nothing left to
// publish returns.
func (s *Store) publishDurable(err error) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	end := s.wal.End()
	s.qmu.Lock()
	n := len(s.inflight)
	if err == nil {
		n = 0
		for n < len(s.inflight) && s.inflight[n].pos.Less(end) {
			n++
		}
	}
	items := s.inflight[:n:n]
	s.inflight = s.inflight[n:]
	s.qmu.Unlock()
	if n == 0 {
		return
	}
	if s.publishHook != nil {
		s.publishHook()
	}
	if err != nil {
		s.fail(err)
		err = s.failure()
	} else {
		s.ov.mu.Lock()
		for _, a := range items {
			s.ov.applyLocked(a, s.boltEntry, s.boltSpace)
		}
		s.ov.mu.Unlock()
		select {
		case s.indexSignal <- struct{}{}:
		default:
		}
	}
	s.qmu.Lock()
	if err == nil {
		s.published = items[len(items)-1].rec.lsn
		s.visible.Store(s.published)
		s.lastGroup = n
	}
	s.pubCond.Broadcast()
	s.qmu.Unlock()
	for _, a := range items {
		a.err = err
		a.done <- struct{}{}
		s.active.Done()
	}
}

// visibleConflict returns c once the record that gave its stream the length c reports is durable
// and visible to reads, or the store's failure if that record never is. Under the commit lock a
// stream's length counts commits still waiting for their fsync; answering at once would tell the
// client of events that are not acknowledged (and could still be lost), and a length read
// straight after, as a retry does, would not see them yet and conflict again.
func (s *Store) visibleConflict(c *ConflictError) error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for s.published < c.lsn {
		if err := s.failure(); err != nil {
			return err
		}
		s.pubCond.Wait()
	}
	return c
}

const (
	// indexBatch bounds one overlay generation, in the index entries of its records (see
	// ovGen.full); a transaction writes one generation, or several up to indexTxMax when the
	// indexer is behind. It counted records until writes with implications came along: a record
	// of an order that implies ten events puts 23 entries (its positions, and an event and a space
	// key per stream), and 65,536 of them made transactions that held gigabytes while they were
	// built. Storage alone, 16 committers writing records of 11 events to new streams, 200,000
	// records, without fsync (two runs each): 44 and 46 s of processor, 26 and 27 s, and 7.2 and
	// 7.7 GB of peak memory counting records; 35 and 39 s, 20 and 22 s, and 3.7 GB counting
	// entries. Most of the difference was the kernel's time (page faults of a heap of gigabytes)
	// and the collector's. Writes of one event, 600,000 of them: no worse.
	indexBatch = 65536
	// The pause between two index transactions (unless someone waits in flush) is twice the time
	// the last one took, within these bounds, so the indexer keeps to about a third of one core
	// while its transactions take up to 500 ms; it runs without a pause while a full batch waits
	// (under writes with implications to new streams, it took 0.55 to 0.7 of a core). Since heads
	// are keyed by stream number and names are merged in bulk (recent_names.go), a transaction
	// appends at the right edge of its buckets and its work per entry hardly depends on its size,
	// up to indexBatch; what a longer pause saves is the part every transaction pays once: two
	// fsyncs, the meta page, and a rewrite of the pages at the right edge of each bucket and at the
	// end of each actor's references. With 64 connections writing to fresh aggregates after 15 s of
	// 16, the minimum of 300 ms instead of 100 ms took the server from about 48 to 46 us of
	// processor per write (four alternated runs each; transactions of about 1,000 records became
	// about 9,000), and held about 10% more memory at peak.
	//
	// Before that layout (heads keyed by stream id, one random page per new stream), larger
	// transactions were the only way to share pages: pauses of four times the last transaction
	// (up to 4 s) wrote 10-15% more at 64 connections but held half a gigabyte more and tripled
	// the open-loop p99; a fixed pause of 2 s won 6% at 64 connections and lost 12% at 256;
	// running the indexer's thread at nice 19 only moved index work past the end of the
	// measurement. None was taken.
	//
	// indexTxMax bounds one index transaction, in entries. An indexer behind by more than a
	// generation writes the pending ones together, up to this bound, rather than one transaction
	// each: appends to streams written before (an order's items reserving stock on existing
	// inventory streams, say) land on pages all over the heads and events buckets, and a
	// transaction rewrites each page it touches once, however many of its entries land there.
	// Orders of ten items drawn from 10,000 inventory streams, 16 connections (bench/'s
	// map/items=10 with its SKUs drawn from a fixed catalog, as map/items=10/catalog=10000 now
	// does; three alternated runs of five): one generation per transaction kept the indexer busy
	// back to back, each transaction of about 2,970 orders rewriting about 22,000 pages in 0.5 s,
	// for 65,100 events/s; up to four, 78,600. Orders to new streams (map/items=10): 83,600 and
	// 88,800 events/s; single-event writes unchanged; peak memory 1.5 to 1.8 GB either way. Eight
	// or sixteen did no better over the catalog (61,800 to 68,000 events/s against 61,800 to
	// 64,300 at four, alternated runs on a slower day). Four generations stay well below the
	// transactions of gigabytes that counting records made (indexBatch).
	//
	// Over the same catalog later (alternated 8 s runs, orders/s): a pause of up to 2 s instead of
	// 1 s, 7,902 against 7,968 (seven pairs; the first four alone said +7%, the last three -7%);
	// three times the last transaction up to 3 s, or up to 4 s, no better than up to 2 s; eight
	// generations with the 2 s pause, 8,504 against 8,283. A transaction there writes 14,000 to
	// 17,000 pages (bbolt's TxStats, with 2,000 to 6,000 splits) for about 140,000 events: the
	// tail page of each inventory stream's events, once, and the pages new entries fill. Leaving
	// the events bucket's puts out altogether (an experiment: reads break) won 14%, 9,487 against
	// 10,856 (three pairs), which bounds what a layout gathering the appends to old streams in
	// runs, merged later as names are, could win. Runs written as they come (event_runs.go: one
	// key per stream and transaction instead of one per event): orders over the catalog in
	// process (BenchmarkImplicationWrite's catalog case, six alternated runs of 40,000) took 9.9%
	// fewer CPU seconds, the fixed ten streams 2.6% fewer; in the server (the catalog scenario,
	// fewer orders per transaction) bbolt's Puts went from 6.4% to 2.6% of its CPU and the
	// indexer from 20.2% to 18.0%, a gain too small for alternated HTTP runs to show. Later, the
	// same experiment (puts to streams numbered before the transaction left out) won 8 to 18%
	// in three pairs, and cut the open-loop p99 from 22-25 to 8-10 ms; the tails bucket
	// (tail_runs.go) is that layout, with a rolling merge.
	indexTxMax    = 4 * indexBatch
	indexPauseMin = 300 * time.Millisecond
	indexPauseMax = time.Second
)

// indexer writes published records to bbolt, one transaction (one fsync) per batch, or per
// several batches when it is behind (indexPending).
func (s *Store) indexer() {
	defer close(s.indexDone)
	pause := time.NewTimer(0)
	for {
		select {
		case <-s.indexSignal:
		case <-s.indexStop:
			s.indexPending(true)
			return
		}
		began := time.Now()
		s.indexPending(false)
		pause.Reset(min(max(2*time.Since(began), indexPauseMin), indexPauseMax))
		select {
		case <-pause.C:
		case <-s.flushNow:
		case <-s.indexStop:
			s.indexPending(true)
			return
		}
	}
}

// indexPending writes the overlay's generations to bbolt, oldest first, in transactions of as many
// as indexTxMax allows. Unless all is set, it stops after a transaction unless the next generation
// is a full batch already: under a steady load, writing generation after generation back to back
// would make one small transaction after another (as many records as arrive during one
// transaction), each rewriting the pages it touches, and the pause would never come. Everything the
// overlay holds when it starts is written either way.
func (s *Store) indexPending(all bool) {
	for s.failure() == nil {
		gens := s.ov.take(indexTxMax)
		if gens == nil {
			return
		}
		s.idxMu.Lock()
		var x *indexTx
		err := s.update(func(tx *bolt.Tx) (err error) {
			if x, err = newIndexTx(tx, &s.idxScratch, s.names, s.opts.tuning(), s.known.hashKey); err != nil {
				return err
			}
			x.cache = &s.idxHeads
			for _, g := range gens {
				for _, a := range g.batch {
					if err := x.apply(a.rec, a.pos); err != nil {
						return err
					}
				}
			}
			return x.finish()
		})
		if err == nil {
			// Before the overlay lets go of the new streams: see recentNames.
			x.committed()
		}
		if x != nil {
			x.release(&s.idxScratch)
		}
		s.idxMu.Unlock()
		if err != nil {
			s.fail(fmt.Errorf("index write: %w", err))
			return
		}
		fullNext := s.ov.drop(gens)
		s.noteCaughtUp()
		last := gens[len(gens)-1].batch
		s.indexed.Store(last[len(last)-1].rec.lsn)
		s.flushMu.Lock()
		s.flushCond.Broadcast()
		s.flushMu.Unlock()
		if !all && !fullNext {
			return
		}
	}
}

// flush waits until every record up to lsn is in bbolt.
func (s *Store) flush(lsn uint64) error {
	return s.awaitIndexer(func() bool { return s.indexed.Load() >= lsn })
}

// awaitIndexer wakes the indexer, cutting its pause short, and waits until done holds, or returns
// the store's failure. The indexer broadcasts flushCond after each transaction it drops, and fail
// does too; done is checked under flushMu, so no broadcast is missed between a check and the wait.
func (s *Store) awaitIndexer(done func() bool) error {
	select {
	case s.indexSignal <- struct{}{}:
	default:
	}
	select {
	case s.flushNow <- struct{}{}:
	default:
	}
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	for !done() {
		if err := s.failure(); err != nil {
			return err
		}
		s.flushCond.Wait()
	}
	return nil
}

// overlayMaxEntries bounds what commits may pile up in the overlay ahead of the indexer, in index
// entries (16 full generations). The indexer is one goroutine, while commits come from as
// many as there are connections: on a machine with more cores than it needs, or with a disk whose
// bbolt transactions are slow, writes could outrun it for as long as they keep coming, and the
// overlay, which holds each record until bbolt has it, would grow until the process ran out of
// memory. At the bound a commit waits for the indexer instead (awaitIndexRoom), so the server
// answers more slowly rather than not at all. The bound is far above what the overlay holds
// while the indexer keeps up: at most about 295,000 entries (five generations) in runs of
// bench/'s single-event writes and of orders implying ten events to new streams, and none of its
// write, batch, map and startup scenarios nor the storage and engine write benchmarks waited
// (counted with an instrumented build). In a storage-only run of 350,000 such orders without
// fsync, an earlier indexer fell ten seconds behind and the process peaked at 6.9 GB.
const overlayMaxEntries = 16 * indexBatch

// awaitIndexRoom holds a commit (or a carry) back while the overlay holds overlayMaxEntries or
// more, until the indexer has written enough of it to bbolt, or returns the store's failure.
func (s *Store) awaitIndexRoom() error {
	limit := s.opts.overlayMax()
	if !s.ov.crowded(limit) {
		return nil
	}
	if s.behind.CompareAndSwap(false, true) {
		s.log.Warn("storage: commits wait for the index writer, which is behind", "overlay_entries", s.ov.held.Load(), "bound", limit)
	}
	return s.awaitIndexer(func() bool { return !s.ov.crowded(limit) })
}

// noteCaughtUp logs the end of a wait for the indexer (awaitIndexRoom) once the overlay is down
// to half its bound: logging it at the first commit let through would say so again and again
// while writes keep the overlay at the bound.
func (s *Store) noteCaughtUp() {
	if s.behind.Load() && !s.ov.crowded(s.opts.overlayMax()/2) && s.behind.CompareAndSwap(true, false) {
		s.log.Info("storage: the index writer caught up; commits no longer wait for it")
	}
}

// view and update run a transaction on the index, which an index vacuum may swap between two
// calls.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	return s.db.View(fn)
}

func (s *Store) update(fn func(*bolt.Tx) error) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	return s.db.Update(fn)
}

// boltEntry and boltSpace read the indexed version of a key, for the overlay's carry rule.
func (s *Store) boltEntry(k StreamKey, idx uint64) (e entry, ok bool) {
	recent := s.names.get(k)
	s.view(func(tx *bolt.Tx) error {
		no := streamNo(tx, k, recent)
		if no == 0 {
			return nil
		}
		runs, err := eventRunsOf(tx)
		if err != nil {
			return err
		}
		if b, err := entryAt(runs, no, idx); err != nil {
			return err
		} else if b != nil {
			ok = e.unmarshal(b) == nil
		} else if idx == 1 {
			e, ok, _ = onlyEntry(tx, no)
		}
		return nil
	})
	return e, ok
}

func (s *Store) boltSpace(k string) (e spaceEntry, ok bool) {
	s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketSpace).Get([]byte(k)); b != nil {
			ok = e.unmarshal(append([]byte(nil), b...)) == nil
		}
		return nil
	})
	return e, ok
}
