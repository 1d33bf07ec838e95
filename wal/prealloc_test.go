package wal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// segFile returns the contents of segment n of the log in ddDir on fs.
func segFile(fs *crashFS, n uint32) []byte {
	return fs.file(filepath.Join(ddDir, segName(n))).data
}

// The active segment is zero-filled ahead of its records and trimmed to them by Close; a crash
// leaves the zero tail, which Open takes for the end of the log and keeps for the writer.
func TestPreallocatedTailIsTheEnd(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs, CompressThreshold: -1, Prealloc: 8192})
	var ps []Pos
	for i := range 3 {
		p, err := l.Append(1, testPayload(i, 100))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	end := int(l.End().Off)
	if got, want := len(segFile(fs, 1)), 12288; got != want {
		t.Fatalf("active segment is %d bytes, want %d (records end at %d, zero-filled 8 KiB past them, aligned)", got, want, end)
	}

	crashed := fs.crash(0)
	l2 := mustOpen(t, ddDir, Options{FS: crashed, CompressThreshold: -1, Prealloc: 8192})
	if got := l2.End(); got != (Pos{Seg: 1, Off: uint32(end)}) {
		t.Fatalf("End() after crash = %v, want 1:%d", got, end)
	}
	if got := len(scanAll(t, l2)); got != len(ps) {
		t.Fatalf("%d records after crash, want %d", got, len(ps))
	}
	if got := len(segFile(crashed, 1)); got != 12288 {
		t.Fatalf("after recovery the segment is %d bytes, want the preallocated 12288 kept", got)
	}
	if _, err := l2.Append(1, testPayload(3, 100)); err != nil {
		t.Fatal(err)
	}
	want := l2.End().Off
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(segFile(crashed, 1)); got != int(want) {
		t.Fatalf("after Close the segment is %d bytes, want %d: trimmed to its records", got, want)
	}
}

// Zeros where a record should be, followed by a valid record, are corruption in the last segment
// too: a later page of the last write reached the disk before an earlier one, or acknowledged
// records were wiped.
func TestZerosBeforeARecordAreCorruption(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs, CompressThreshold: -1})
	var ps []Pos
	for i := range 4 {
		p, err := l.Append(1, testPayload(i, 100))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	crashed := fs.crash(0)
	ino := crashed.file(filepath.Join(ddDir, segName(1)))
	clear(ino.data[ps[1].Off:ps[2].Off])
	ino.synced = slices.Clone(ino.data)
	_, err := Open(ddDir, Options{FS: crashed})
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Offset != int64(ps[1].Off) {
		t.Fatalf("Open = %v, want a CorruptionError at offset %d", err, ps[1].Off)
	}
}

// A torn write into preallocated space is truncated like a torn append, at every length it can be
// cut to.
func TestTornWriteIntoPreallocatedSpace(t *testing.T) {
	fs := newCrashFS()
	opts := Options{FS: fs, CompressThreshold: -1, Prealloc: 8192}
	l := mustOpen(t, ddDir, opts)
	if _, err := l.Append(1, testPayload(0, 100)); err != nil {
		t.Fatal(err)
	}
	end := l.End()
	fs.stallSyncs()
	p := l.Write(1, testPayload(1, 300))
	fs.waitStalled()
	size := int(p.Pos().Off) + headerSize + 300
	for torn := 1; torn < size-int(end.Off); torn++ {
		crashed := fs.crash(torn)
		opts.FS = crashed
		l2, err := Open(ddDir, opts)
		if err != nil {
			t.Fatalf("torn=%d: Open: %v", torn, err)
		}
		if got := l2.End(); got != end {
			t.Errorf("torn=%d: End() = %v, want %v", torn, got, end)
		}
		if got := len(segFile(crashed, 1)); got != int(end.Off) {
			t.Errorf("torn=%d: segment is %d bytes after recovery, want the torn tail truncated to %d", torn, got, end.Off)
		}
		l2.Close()
	}
	fs.unstall()
}

// A sealed segment still carrying its zero tail (a crash before its trim was durable) is trimmed by
// Open when the tail is all zero up to an aligned size; any other tail stays corruption.
func TestUntrimmedSealedSegment(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs, CompressThreshold: -1})
	for i := range 3 {
		if _, err := l.Append(1, testPayload(i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(1, testPayload(3, 100)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sealed := slices.Clone(segFile(fs, 1))

	cases := []struct {
		name    string
		tail    []byte
		corrupt bool
	}{
		{"zeros to an aligned size", make([]byte, 2*preallocAlign-len(sealed)), false},
		{"zeros to an unaligned size", make([]byte, 100), true},
		{"a non-zero byte in the zeros", append(make([]byte, preallocAlign-len(sealed)-1), 1), true},
	}
	for _, c := range cases {
		crashed := fs.crash(0)
		ino := crashed.file(filepath.Join(ddDir, segName(1)))
		ino.data = append(slices.Clone(sealed), c.tail...)
		ino.synced = slices.Clone(ino.data)
		l2, err := Open(ddDir, Options{FS: crashed})
		if c.corrupt {
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Offset != int64(len(sealed)) {
				t.Errorf("%s: Open = %v, want a CorruptionError at offset %d", c.name, err, len(sealed))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Open: %v", c.name, err)
		}
		if got := len(scanAll(t, l2)); got != 4 {
			t.Errorf("%s: %d records, want 4", c.name, got)
		}
		if got := len(segFile(crashed, 1)); got != len(sealed) {
			t.Errorf("%s: sealed segment is %d bytes, want it trimmed to %d", c.name, got, len(sealed))
		}
		l2.Close()
	}
}

// With preallocation off, the segment file holds its records and nothing else.
func TestPreallocOff(t *testing.T) {
	fs := newCrashFS()
	l := mustOpen(t, ddDir, Options{FS: fs, CompressThreshold: -1, Prealloc: -1})
	if _, err := l.Append(1, testPayload(0, 100)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(segFile(fs, 1)), int(l.End().Off); got != want {
		t.Fatalf("segment is %d bytes, want %d", got, want)
	}
}

// Repair leaves a preallocated zero tail alone: it is not damage.
func TestRepairKeepsPreallocatedTail(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{CompressThreshold: -1})
	for i := range 3 {
		if _, err := l.Append(1, testPayload(i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	end := int64(l.End().Off)
	path := filepath.Join(dir, segName(1))
	if st, err := os.Stat(path); err != nil || st.Size() <= end {
		t.Fatalf("open segment: stat = %v, %v; want a file preallocated past %d", st, err, end)
	}
	// Copy the open log's directory as a crash would leave it, with the zero tail.
	crashDir := t.TempDir()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashDir, segName(1)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := Repair(crashDir); err != nil || rep != (RepairReport{}) {
		t.Fatalf("Repair of a log with a preallocated tail = %+v, %v; want nothing cut", rep, err)
	}
	l2 := mustOpen(t, crashDir, Options{})
	if got := l2.End(); got != (Pos{Seg: 1, Off: uint32(end)}) {
		t.Fatalf("End() = %v, want 1:%d", got, end)
	}
}
