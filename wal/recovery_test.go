package wal

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// buildLog writes n records to a fresh crashFS and closes the log.
func buildLog(t *testing.T, n, size, threshold int) (*crashFS, []Pos) {
	t.Helper()
	fs := newCrashFS()
	l, err := Open(ddDir, Options{FS: fs, CompressThreshold: threshold})
	if err != nil {
		t.Fatal(err)
	}
	var ps []Pos
	for i := range n {
		p, err := l.Append(uint8(i), testPayload(i, size))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, ps
}

func withFile(fs *crashFS, data []byte) *crashFS {
	out := fs.crash(0)
	ino := out.names[filepath.Join(ddDir, segName(1))]
	ino.data, ino.synced = data, slices.Clone(data)
	return out
}

// Cutting the last segment at every offset inside its last record recovers to the record before.
func TestTornTailEveryOffset(t *testing.T) {
	for _, threshold := range []int{-1, 64} {
		t.Run(fmt.Sprintf("compress=%d", threshold), func(t *testing.T) {
			fs, ps := buildLog(t, 5, 300, threshold)
			full := fs.file(filepath.Join(ddDir, segName(1))).data
			last := ps[len(ps)-1]
			for cut := int(last.Off) + 1; cut < len(full); cut++ {
				l, err := Open(ddDir, Options{FS: withFile(fs, slices.Clone(full[:cut])), CompressThreshold: threshold})
				if err != nil {
					t.Fatalf("cut at %d: Open: %v", cut, err)
				}
				if got := l.End(); got != last {
					t.Errorf("cut at %d: End() = %v, want %v", cut, got, last)
				}
				if got := len(scanAll(t, l)); got != len(ps)-1 {
					t.Errorf("cut at %d: %d records, want %d", cut, got, len(ps)-1)
				}
				l.Close()
			}
		})
	}
}

// Flipping any bit of any record but the last is corruption that names the file and the record's
// offset; nothing is dropped silently.
func TestBitFlipIsCorruption(t *testing.T) {
	for _, threshold := range []int{-1, 64} {
		t.Run(fmt.Sprintf("compress=%d", threshold), func(t *testing.T) {
			fs, ps := buildLog(t, 4, 120, threshold)
			full := fs.file(filepath.Join(ddDir, segName(1))).data
			for r := 0; r < len(ps)-1; r++ {
				for off := int(ps[r].Off); off < int(ps[r+1].Off); off++ {
					bit := off % 8
					data := slices.Clone(full)
					data[off] ^= 1 << bit
					_, err := Open(ddDir, Options{FS: withFile(fs, data)})
					var ce *CorruptionError
					if !errors.As(err, &ce) || !IsCorruption(err) {
						t.Fatalf("flip byte %d bit %d (record %d): Open error = %v, want a CorruptionError", off, bit, r, err)
					}
					if want := filepath.Join(ddDir, segName(1)); ce.File != want || ce.Offset != int64(ps[r].Off) {
						t.Fatalf("flip byte %d: error at %s:%d, want %s:%d", off, ce.File, ce.Offset, want, ps[r].Off)
					}
				}
			}
		})
	}
}

// Zeroed bytes, as a filesystem may show after a crash past the synced size, never make a record.
func TestZeroesAreNotARecord(t *testing.T) {
	for n := headerSize; n < 64; n++ {
		if validAt(make([]byte, n)) {
			t.Fatalf("%d zero bytes decode as a valid record", n)
		}
	}
}

// Concurrent appenders, a crash at a random moment that keeps a random part of the unsynced
// bytes: every acknowledged record is there after recovery, and nothing recovered is damaged.
func TestCrashKeepsAcknowledged(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		fs := newCrashFS()
		opts := Options{FS: fs, SegmentSize: 4096, CompressThreshold: 64}
		l, err := Open(ddDir, opts)
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			acked = map[Pos]int{}
			wg    sync.WaitGroup
		)
		for w := range 4 {
			wg.Go(func() {
				for i := w * 1000; ; i++ {
					p, err := l.Append(1, testPayload(i, 50+i%200))
					if err != nil {
						return
					}
					mu.Lock()
					acked[p] = i
					mu.Unlock()
				}
			})
		}
		for {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= 50+rng.IntN(200) {
				break
			}
		}
		mu.Lock()
		before := maps.Clone(acked)
		mu.Unlock()
		crashed := fs.crash(rng.IntN(400))
		l.Close()
		wg.Wait()

		opts.FS = crashed
		l2, err := Open(ddDir, opts)
		if err != nil {
			t.Fatalf("round %d: recover: %v", round, err)
		}
		got := map[Pos]string{}
		for _, r := range scanAll(t, l2) {
			got[r.pos] = r.payload
		}
		for p, i := range before {
			if got[p] != string(testPayload(i, 50+i%200)) {
				t.Fatalf("round %d: acknowledged record %d at %v lost or changed after crash", round, i, p)
			}
		}
		l2.Close()
	}
}
