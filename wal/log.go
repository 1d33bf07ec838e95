package wal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Log is an open log directory. All methods are safe for concurrent use.
type Log struct {
	dir       string
	fs        FS
	segSize   int64
	threshold int   // <0: never compress
	prealloc  int64 // how far ahead of the writer the active segment is zero-filled; 0: never
	noSync    bool
	logger    *slog.Logger
	onDurable func() // Options.OnDurable

	// table is what readers see of the segments; they load it and never take a lock.
	table atomic.Pointer[segTable]
	// durable is End() as Pos.Uint64. It is stored after the fsync that made it true and after
	// table holds every segment below it.
	durable atomic.Uint64
	closed  atomic.Bool
	stats   struct{ records, groups atomic.Uint64 }

	// tableMu serializes the writers of table: the flusher, Compact and Close.
	tableMu sync.Mutex
	// compactMu serializes Compact with itself and with Close.
	compactMu sync.Mutex

	mu struct {
		sync.Mutex
		flushCond   sync.Cond    // the flusher waits here for work; protected by mu
		buf         []byte       // frames written and not yet taken by the flusher; protected by mu
		parts       []part       // where buf switches segment; protected by mu
		next        Pos          // where the next record goes; protected by mu
		seq         uint64       // number of the group buf belongs to; protected by mu
		count       atomic.Int64 // records in buf; written under mu, read by the flusher without it
		flusherIdle bool         // protected by mu
		flushing    bool         // a group is being written (group_commit.go); protected by mu
		closing     bool         // protected by mu
		err         error        // the error that failed the log; protected by mu
	}

	sync struct {
		sync.Mutex
		// waiters[g&1] holds a channel per appender waiting for group g. Two alternating lists
		// mean that finishing a group does not touch the waiters of the group filling behind it;
		// a channel per waiter means that each wakes on its own, without queueing for a lock.
		waiters [2][]chan struct{} // protected by sync.Mutex
		done    uint64             // highest group that is durable; protected by sync.Mutex
		err     error              // protected by sync.Mutex
	}
	doneSeq atomic.Uint64 // copy of sync.done for the fast path of Wait

	// Owned by whoever writes a group (mu.flushing: the flusher goroutine or a Flush), and by
	// the flusher alone once it is closing.
	active     *segment
	activeSize int64 // end of the active segment's records
	allocEnd   int64 // size of the active segment's file, zero-filled past activeSize
	unsynced   bool
	spare      []byte
	spareParts []part
	wakeSpare  []chan struct{}

	flusherDone chan struct{}
	lock        io.Closer // the directory's LOCK file, held from Open to Close
}

// lockName is the file in a log directory whose lock says that a Log or Repair has it open.
const lockName = "LOCK"

// part is a run of a group's buffer that goes to one segment, starting at file offset off.
type part struct {
	seg   uint32
	off   uint32
	start int
}

// Open opens the log in dir, creating dir if missing, and recovers it: a torn tail of the last
// segment is truncated; a bad record anywhere else fails Open with a *CorruptionError.
func Open(dir string, opts Options) (*Log, error) {
	if opts.SegmentSize < 0 || opts.SegmentSize >= 1<<32 {
		return nil, fmt.Errorf("wal: segment size %d out of range [0, 4 GiB)", opts.SegmentSize)
	}
	l := &Log{
		dir:         dir,
		fs:          cmp.Or[FS](opts.FS, OSFS{}),
		segSize:     cmp.Or(opts.SegmentSize, DefaultSegmentSize),
		threshold:   cmp.Or(opts.CompressThreshold, DefaultCompressThreshold),
		prealloc:    max(cmp.Or(opts.Prealloc, DefaultPrealloc), 0),
		noSync:      opts.NoSync,
		logger:      opts.Logger,
		onDurable:   opts.OnDurable,
		flusherDone: make(chan struct{}),
	}
	if l.logger == nil {
		l.logger = discardLogger()
	}
	l.mu.flushCond.L = &l.mu.Mutex
	if err := l.fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", dir, err)
	}
	lock, err := l.fs.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, err
	}
	l.lock = lock
	if err := l.recover(); err != nil {
		lock.Close()
		return nil, err
	}
	l.mu.seq = 1
	go l.flushLoop()
	return l, nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// recover builds the segment table from dir and positions the writer after the last good record.
func (l *Log) recover() error {
	nums, err := listSegments(l.fs, l.dir, l.logger)
	if err != nil {
		return err
	}
	t := &segTable{}
	fail := func(err error) error {
		for _, s := range t.segs {
			s.release()
		}
		return err
	}
	if len(nums) == 0 {
		if err := l.createSegment(1); err != nil {
			return err
		}
		l.table.Store(&segTable{segs: []*segment{l.active}})
		l.mu.next = Pos{Seg: 1}
		l.durable.Store(l.mu.next.Uint64())
		return nil
	}
	for _, n := range nums[:len(nums)-1] {
		s, err := l.openVerified(n)
		if err != nil {
			return fail(err)
		}
		t.segs = append(t.segs, s)
	}
	last := nums[len(nums)-1]
	path := segPath(l.dir, last)
	f, err := l.fs.Open(path)
	if err != nil {
		return fail(fmt.Errorf("wal: open %s: %w", path, err))
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return fail(fmt.Errorf("wal: size of %s: %w", path, err))
	}
	s := newSegment(last, path, f, false, 0)
	t.segs = append(t.segs, s)
	end, zeros, err := recoverTail(s, size)
	if err != nil {
		return fail(err)
	}
	alloc := size
	if end < size && !zeros {
		alloc = end
		l.logger.Warn("wal: truncating torn tail", "file", path, "offset", end, "bytes", size-end)
		if err := f.Truncate(end); err != nil {
			return fail(fmt.Errorf("wal: truncate %s: %w", path, err))
		}
		if err := l.syncFile(f); err != nil {
			return fail(fmt.Errorf("wal: fsync %s: %w", path, err))
		}
	}
	l.active, l.activeSize, l.allocEnd = s, end, alloc
	l.table.Store(t)
	l.mu.next = Pos{Seg: last, Off: uint32(end)}
	l.durable.Store(l.mu.next.Uint64())
	return nil
}

// listSegments returns the segment numbers in dir in order, removing leftovers of an interrupted
// compaction on the way.
func listSegments(fs FS, dir string, logger *slog.Logger) ([]uint32, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var nums []uint32
	removed := false
	for _, name := range names {
		if strings.HasSuffix(name, tmpSuffix) {
			logger.Info("wal: removing leftover temporary file", "file", name)
			if err := fs.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("wal: remove %s: %w", name, err)
			}
			removed = true
			continue
		}
		if n, ok := parseSegName(name); ok {
			nums = append(nums, n)
		}
	}
	if removed {
		if err := fs.SyncDir(dir); err != nil {
			return nil, fmt.Errorf("wal: fsync %s: %w", dir, err)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// openVerified opens sealed segment n and checks every record of it. A sealed segment was fsynced
// whole before the next one was created, so a bad record in it is corruption, with one exception:
// an all-zero tail up to an aligned size is preallocated space whose trim a crash interrupted, and
// is trimmed now.
func (l *Log) openVerified(n uint32) (*segment, error) {
	s, err := openSealed(l.fs, l.dir, n)
	if err != nil {
		return nil, err
	}
	off, why, err := firstBad(s, s.size)
	if err == nil && why == "" {
		return s, nil
	}
	untrimmed := false
	if err == nil {
		untrimmed, err = untrimmedTail(s, off, s.size)
	}
	path, size := s.path, s.size
	s.release()
	switch {
	case err != nil:
		return nil, &CorruptionError{File: path, Offset: off, Reason: err.Error()}
	case !untrimmed:
		return nil, &CorruptionError{File: path, Offset: off, Reason: why}
	}
	l.logger.Warn("wal: trimming preallocated tail of sealed segment", "file", path, "offset", off, "bytes", size-off)
	if err := l.trimFile(path, off); err != nil {
		return nil, err
	}
	return openSealed(l.fs, l.dir, n)
}

// trimFile truncates the file at path to size and makes that durable.
func (l *Log) trimFile(path string, size int64) error {
	f, err := l.fs.Open(path)
	if err != nil {
		return fmt.Errorf("wal: open %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return fmt.Errorf("wal: trim %s: %w", path, err)
	}
	if err := l.syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wal: close %s: %w", path, err)
	}
	return nil
}

func openSealed(fs FS, dir string, n uint32) (*segment, error) {
	path := segPath(dir, n)
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", path, err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: size of %s: %w", path, err)
	}
	return newSegment(n, path, f, true, size), nil
}

func (l *Log) syncFile(f File) error {
	if l.noSync {
		return nil
	}
	return f.Sync()
}

func (l *Log) syncDir() error {
	if l.noSync {
		return nil
	}
	return l.fs.SyncDir(l.dir)
}

// SegmentInfo describes one segment file. Size counts durable bytes.
type SegmentInfo struct {
	Seg    uint32
	Size   int64
	Sealed bool
}

// End returns the position just past the last durable record.
func (l *Log) End() Pos { return PosFromUint64(l.durable.Load()) }

// Segments describes the segment files, in order.
func (l *Log) Segments() []SegmentInfo {
	end := l.End()
	t := l.table.Load()
	out := make([]SegmentInfo, 0, len(t.segs))
	for _, s := range t.segs {
		out = append(out, SegmentInfo{Seg: s.num, Size: limitOf(s, end), Sealed: s.sealed})
	}
	return out
}

// Stats counts what the log has done since Open.
type Stats struct {
	Records uint64 // records made durable
	Groups  uint64 // group commits, each one write per segment touched and one fsync
}

// Stats returns the counters of the log.
func (l *Log) Stats() Stats {
	return Stats{Records: l.stats.records.Load(), Groups: l.stats.groups.Load()}
}

// Close flushes and fsyncs the records written so far, then closes the files. It returns the
// error that failed the log, if one did.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.mu.closing {
		l.mu.Unlock()
		return ErrClosed
	}
	l.mu.closing = true
	l.mu.flushCond.Signal()
	l.mu.Unlock()
	<-l.flusherDone

	l.compactMu.Lock()
	defer l.compactMu.Unlock()
	l.tableMu.Lock()
	t := l.table.Swap(&segTable{})
	l.closed.Store(true)
	l.tableMu.Unlock()
	for _, s := range t.segs {
		s.release()
	}
	l.lock.Close()
	l.sync.Lock()
	err := l.sync.err
	l.sync.Unlock()
	if err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}
