package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The storage behaviour over a configuration matrix: fsync on and off, small and default
// segments, compression on and off, on the operating system's filesystem (mapped reads).
func TestMatrix(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		for _, segSize := range []int64{4096, 0} {
			for _, threshold := range []int{-1, 128} {
				name := fmt.Sprintf("nosync=%v/segment=%d/compress=%d", noSync, segSize, threshold)
				t.Run(name, func(t *testing.T) {
					testStorage(t, Options{NoSync: noSync, SegmentSize: segSize, CompressThreshold: threshold})
				})
			}
		}
	}
}

func testStorage(t *testing.T, opts Options) {
	dir := t.TempDir()
	l := mustOpen(t, dir, opts)
	const writers, perWriter = 8, 60
	type acked struct {
		pos Pos
		i   int
	}
	var (
		mu  sync.Mutex
		all []acked
		wg  sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for j := range perWriter {
				i := w*perWriter + j
				p, err := l.Append(uint8(i%7), testPayload(i, 20+i%600))
				if err != nil {
					t.Errorf("Append %d: %v", i, err)
					return
				}
				mu.Lock()
				all = append(all, acked{p, i})
				mu.Unlock()
			}
		})
	}
	// A reader runs alongside the writers and must only ever see whole records.
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := checkLog(l); err != nil {
				t.Errorf("concurrent check: %v", err)
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	rwg.Wait()

	for _, a := range all {
		kind, payload, err := l.Read(a.pos)
		if err != nil || kind != uint8(a.i%7) || string(payload) != string(testPayload(a.i, 20+a.i%600)) {
			t.Fatalf("Read(%v) of record %d = %d, %d bytes, %v", a.pos, a.i, kind, len(payload), err)
		}
	}
	before := scanAll(t, l)
	if len(before) != writers*perWriter {
		t.Fatalf("scan found %d records, want %d", len(before), writers*perWriter)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, dir, opts)
	after := scanAll(t, l2)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("records after reopening differ from before")
	}
	if segs := l2.Segments(); opts.SegmentSize == 4096 && len(segs) < 2 {
		t.Fatalf("%d segments, want rotation with 4 KiB segments", len(segs))
	}
}

// Write and Wait apart: Write returns the position at once, Wait returns when it is durable.
func TestWriteThenWait(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs})
	var ps []*Pending
	for i := range 10 {
		ps = append(ps, l.Write(1, testPayload(i, 40)))
	}
	for i, p := range ps {
		if err := p.Wait(); err != nil {
			t.Fatalf("Wait %d: %v", i, err)
		}
		if end := l.End(); !p.Pos().Less(end) {
			t.Fatalf("record %d at %v waited for, but End() = %v", i, p.Pos(), end)
		}
	}
	for i := 1; i < len(ps); i++ {
		if !ps[i-1].Pos().Less(ps[i].Pos()) {
			t.Fatalf("positions out of Write order: %v then %v", ps[i-1].Pos(), ps[i].Pos())
		}
	}
	if st := l.Stats(); st.Records != 10 || st.Groups < 1 || st.Groups > 10 {
		t.Fatalf("Stats() = %+v, want 10 records in 1 to 10 groups", st)
	}
}

// waitFlusherIdle returns once the flusher goroutine waits for work and no group is being written.
func waitFlusherIdle(t *testing.T, l *Log) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		idle := l.mu.flusherIdle && !l.mu.flushing
		l.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the flusher never went idle")
		}
		time.Sleep(time.Millisecond)
	}
}

// A deferred write's Flush, with the flusher idle, writes and fsyncs the group itself: the record
// is durable when Flush returns, without waiting, and survives a crash right after.
func TestFlushWritesALoneGroup(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs})
	for i := range 5 {
		waitFlusherIdle(t, l)
		p := l.WriteDeferred(1, testPayload(i, 40))
		p.Flush()
		if end := l.End(); !p.Pos().Less(end) {
			t.Fatalf("record %d at %v: End() = %v when Flush returned, want it durable", i, p.Pos(), end)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if st := l.Stats(); st.Records != 5 || st.Groups != 5 {
		t.Fatalf("Stats() = %+v, want 5 records in 5 groups", st)
	}
	l2 := mustOpen(t, ddDir, Options{FS: fs.crash(0)})
	if got := scanAll(t, l2); len(got) != 5 {
		t.Fatalf("after a crash: %d records, want the 5 flushed", len(got))
	}
}

// OnDurable runs once per group written, by the flusher or by a Flush, after the group's fsync
// (End covers it) and before its waiters wake, with no lock of the log held.
func TestOnDurable(t *testing.T) {
	fs := newCrashFS()
	var l *Log
	var calls atomic.Int64
	var seen atomic.Uint64 // the End the last call saw
	// checkLocks is set once only the test writes: then no one else can hold a lock of the log.
	var checkLocks, locked atomic.Bool
	l = mustOpen(t, ddDir, Options{FS: fs, OnDurable: func() {
		calls.Add(1)
		seen.Store(l.End().Uint64())
		if !checkLocks.Load() {
			return
		}
		if !l.mu.TryLock() {
			locked.Store(true)
			return
		}
		l.mu.Unlock()
		if !l.sync.TryLock() {
			locked.Store(true)
			return
		}
		l.sync.Unlock()
	}})
	covered := func(p *Pending) bool { return p.Pos().Less(PosFromUint64(seen.Load())) }

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				p := l.Write(1, testPayload(w*100+i, 60))
				if err := p.Wait(); err != nil {
					errs <- err
					return
				}
				if !covered(p) {
					errs <- fmt.Errorf("record at %v woken before OnDurable saw it durable (it saw %v)", p.Pos(), PosFromUint64(seen.Load()))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkLocks.Store(true)
	for i := range 3 {
		waitFlusherIdle(t, l)
		before := calls.Load()
		p := l.WriteDeferred(1, testPayload(1000+i, 60))
		p.Flush()
		if calls.Load() != before+1 || !covered(p) {
			t.Fatalf("Flush of a lone group: OnDurable called %d times, saw %v; want once, past %v", calls.Load()-before, PosFromUint64(seen.Load()), p.Pos())
		}
	}
	if st := l.Stats(); uint64(calls.Load()) != st.Groups {
		t.Fatalf("OnDurable called %d times for %d groups", calls.Load(), st.Groups)
	}
	if locked.Load() {
		t.Fatal("OnDurable ran with a lock of the log held")
	}
}

// Deferred writes flushed by their writers, writes that wake the flusher and a Close all at
// once: every record whose Wait succeeded is in the log after a crash, in Write order, and no
// Wait hangs (run with -race, this also checks that the flusher and Flush never share a group's
// buffers).
func TestFlushRacesTheFlusherAndClose(t *testing.T) {
	fs := newCrashFS()
	l, err := Open(ddDir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		durable = map[string]bool{}
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				payload := fmt.Sprintf("w%d-%d", w, i)
				var p *Pending
				if (w+i)%2 == 0 {
					p = l.WriteDeferred(1, []byte(payload))
					p.Flush()
				} else {
					p = l.Write(1, []byte(payload))
				}
				err := p.Wait()
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				durable[payload] = true
				mu.Unlock()
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l2 := mustOpen(t, ddDir, Options{FS: fs.crash(0)})
	seen := map[string]bool{}
	last := make([]int, writers) // each writer's last record in log order, -1 for none yet
	for w := range last {
		last[w] = -1
	}
	for _, r := range scanAll(t, l2) {
		seen[r.payload] = true
		var w, i int
		if _, err := fmt.Sscanf(r.payload, "w%d-%d", &w, &i); err != nil {
			t.Fatalf("record %q: %v", r.payload, err)
		}
		if i <= last[w] {
			t.Fatalf("%s follows w%d-%d in the log: not in Write order", r.payload, w, last[w])
		}
		last[w] = i
	}
	for payload := range durable {
		if !seen[payload] {
			t.Fatalf("%s was durable (Wait returned nil) but is not in the log after a crash", payload)
		}
	}
	if len(durable) == 0 {
		t.Fatal("no write finished before Close")
	}
}

// Close flushes what was written; afterwards every operation says ErrClosed.
func TestClose(t *testing.T) {
	fs := newCrashFS()
	l, err := Open(ddDir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	p := l.Write(1, []byte("last words"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("Wait after Close = %v, want nil (Close flushes)", err)
	}
	checks := []struct {
		name string
		err  error
	}{
		{"Append", func() error { _, err := l.Append(1, nil); return err }()},
		{"Write", l.Write(1, nil).Wait()},
		{"Read", func() error { _, _, err := l.Read(Pos{Seg: 1}); return err }()},
		{"Scan", l.Scan(Pos{}, func(Pos, uint8, []byte) error { return nil })},
		{"Rotate", l.Rotate()},
		{"Compact", l.Compact(1, nil, nil)},
		{"Close", l.Close()},
	}
	for _, c := range checks {
		if !errors.Is(c.err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", c.name, c.err)
		}
	}
	l2 := mustOpen(t, ddDir, Options{FS: fs.crash(0)})
	if got := scanAll(t, l2); len(got) != 1 || got[0].payload != "last words" {
		t.Fatalf("after Close and crash: %v, want the one record", got)
	}
}

type failingFS struct {
	*crashFS
	err error
}

func (f failingFS) Create(name string) (File, error) {
	file, err := f.crashFS.Create(name)
	return failingFile{file, f.err}, err
}

func (f failingFS) Open(name string) (File, error) {
	file, err := f.crashFS.Open(name)
	return failingFile{file, f.err}, err
}

type failingFile struct {
	File
	err error
}

func (f failingFile) Sync() error { return f.err }

// A failed fsync fails the log for good: the waiting append, and every later one, get its error.
func TestFsyncFailureIsFinal(t *testing.T) {
	boom := errors.New("disk on fire")
	l, err := Open(ddDir, Options{FS: failingFS{newCrashFS(), boom}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(1, []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("Append = %v, want the fsync error", err)
	}
	if err := l.Write(1, []byte("y")).Wait(); !errors.Is(err, boom) {
		t.Fatalf("later Write = %v, want the fsync error", err)
	}
	if got := l.End(); got != (Pos{Seg: 1}) {
		t.Fatalf("End() = %v after a failed fsync, want 1:0", got)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, size := range []int64{-1, 1 << 32} {
		if _, err := Open(t.TempDir(), Options{SegmentSize: size}); err == nil {
			t.Errorf("Open with segment size %d succeeded, want an error", size)
		}
	}
}

// Leftovers of an interrupted compaction are removed at Open; other files are left alone.
func TestOpenRemovesTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{})
	if _, err := l.Append(1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for name, content := range map[string]string{"00000001.seg.tmp": "half", "notes.txt": "mine"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustOpen(t, dir, Options{})
	if _, err := os.Stat(filepath.Join(dir, "00000001.seg.tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file still there after Open (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("Open removed a file that is not its own: %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	l := mustOpen(t, ddDir, Options{FS: newCrashFS()})
	p, err := l.Append(1, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []Pos{{Seg: p.Seg, Off: 11}, {Seg: 9}, {Seg: 0}} {
		if _, _, err := l.Read(pos); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%v) = %v, want ErrNotFound", pos, err)
		}
	}
	if _, _, err := l.Read(Pos{Seg: p.Seg, Off: 3}); !IsCorruption(err) {
		t.Errorf("Read inside a record = %v, want a corruption error", err)
	}
	big := l.Write(1, make([]byte, MaxPayload+1))
	if err := big.Wait(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Write of %d bytes = %v, want ErrTooLarge", MaxPayload+1, err)
	}
}

func TestPos(t *testing.T) {
	cases := []struct{ a, b Pos }{
		{Pos{1, 0}, Pos{1, 1}},
		{Pos{1, 1 << 31}, Pos{2, 0}},
		{Pos{0, 0}, Pos{0, 1}},
	}
	for _, c := range cases {
		if !c.a.Less(c.b) || c.b.Less(c.a) || !(c.a.Uint64() < c.b.Uint64()) {
			t.Errorf("%v should sort before %v, also as Uint64", c.a, c.b)
		}
		if got := PosFromUint64(c.a.Uint64()); got != c.a {
			t.Errorf("PosFromUint64(%v.Uint64()) = %v", c.a, got)
		}
	}
	if got := (Pos{3, 42}).String(); got != "3:42" {
		t.Errorf("String() = %q, want 3:42", got)
	}
	if !strings.Contains((&CorruptionError{File: "f", Offset: 7, Reason: "r"}).Error(), "f at offset 7") {
		t.Error("CorruptionError does not name file and offset")
	}
}

// A directory is held by one Log at a time; Repair refuses a log that is open.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{})
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if _, err := Repair(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("Repair of an open log = %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dir, Options{})
}
