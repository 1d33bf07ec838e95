package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/j17-go/j17/wal"
)

// walSegment is the name of the first segment of a log.
const walSegment = "00000001.seg"

// walSeedLog builds a log with the given payloads (compression on from 16 bytes) and returns the
// bytes of its only segment.
func walSeedLog(tb testing.TB, payloads ...[]byte) []byte {
	tb.Helper()
	dir := tb.TempDir()
	l, err := wal.Open(dir, wal.Options{NoSync: true, CompressThreshold: 16})
	if err != nil {
		tb.Fatal(err)
	}
	for i, p := range payloads {
		if _, err := l.Append(uint8(i), p); err != nil {
			tb.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, walSegment))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func walSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	good := walSeedLog(f, []byte("hello"), bytes.Repeat([]byte(`{"type":"was_placed","data":{}}`), 20), []byte("x"))
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(good[:7])
	flipped := bytes.Clone(good)
	flipped[12] ^= 0x10
	f.Add(flipped)
}

// walCheckCRC says whether the record at off of seg has a good checksum, decoding the frame
// independently of the package: CRC-32C over the stored payload then length, kind and flags.
func walCheckCRC(seg []byte, off uint32) bool {
	if int(off)+10 > len(seg) {
		return false
	}
	h := seg[off:]
	n := binary.LittleEndian.Uint32(h[4:8])
	if uint64(off)+10+uint64(n) > uint64(len(seg)) {
		return false
	}
	t := crc32.MakeTable(crc32.Castagnoli)
	c := crc32.Update(0, t, h[10:10+n])
	c = crc32.Update(c, t, h[4:10])
	return c == binary.LittleEndian.Uint32(h[0:4])
}

// FuzzWALRecover opens a log whose last segment holds arbitrary bytes. It must never panic; it
// either recovers or reports corruption; and every record recovery yields has a good checksum
// and lies inside the file.
func FuzzWALRecover(f *testing.F) {
	walSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, walSegment), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := wal.Open(dir, wal.Options{NoSync: true})
		if err != nil {
			if !wal.IsCorruption(err) {
				t.Fatalf("Open failed with %v, want a corruption error or success", err)
			}
			rep, err := wal.Repair(dir)
			if err != nil || rep.File == "" {
				t.Fatalf("Repair of a log Open calls corrupt = %+v, %v; want a cut", rep, err)
			}
			if l, err = wal.Open(dir, wal.Options{NoSync: true}); err != nil {
				t.Fatalf("Open after Repair: %v", err)
			}
		}
		defer l.Close()
		if end := l.End(); int(end.Off) > len(data) {
			t.Fatalf("End() = %v beyond the %d bytes of the file", end, len(data))
		}
		err = l.Scan(wal.Pos{}, func(p wal.Pos, kind uint8, payload []byte) error {
			if !walCheckCRC(data, p.Off) {
				t.Fatalf("recovery yielded the record at %v, whose checksum is bad", p)
			}
			k, b, err := l.Read(p)
			if err != nil || k != kind || !bytes.Equal(b, payload) {
				t.Fatalf("Read(%v) = %d, %q, %v; Scan saw %d, %q", p, k, b, err, kind, payload)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Scan of a recovered log: %v", err)
		}
	})
}

// FuzzWALRoundTrip appends arbitrary payloads, with and without compression, and reads them back.
func FuzzWALRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), uint8(1), 0)
	f.Add(bytes.Repeat([]byte("abc"), 400), uint8(7), 16)
	f.Add([]byte{}, uint8(0), -1)
	f.Fuzz(func(t *testing.T, payload []byte, kind uint8, threshold int) {
		dir := t.TempDir()
		opts := wal.Options{NoSync: true, SegmentSize: 1024, CompressThreshold: threshold}
		l, err := wal.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		var ps []wal.Pos
		for i := range 3 {
			p, err := l.Append(kind+uint8(i), payload)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if l, err = wal.Open(dir, opts); err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer l.Close()
		for i, p := range ps {
			k, b, err := l.Read(p)
			if err != nil || k != kind+uint8(i) || !bytes.Equal(b, payload) {
				t.Fatalf("Read(%v) = %d, %d bytes, %v; want %d, %d bytes", p, k, len(b), err, kind+uint8(i), len(payload))
			}
		}
		if _, _, err := l.Read(l.End()); !errors.Is(err, wal.ErrNotFound) {
			t.Fatalf("Read(End()) = %v, want ErrNotFound", err)
		}
	})
}
