package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// After Compact no byte of a dropped record is left in any file of the directory, kept records
// read back at their reported positions, and a reader running through the compaction only ever
// sees whole records.
func TestCompactErases(t *testing.T) {
	for _, threshold := range []int{-1, 64} {
		t.Run(fmt.Sprintf("compress=%d", threshold), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentSize: 8192, CompressThreshold: threshold}
			l := mustOpen(t, dir, opts)
			secret := func(i int) []byte { return fmt.Appendf(nil, "SECRET-%04d-%s", i, bytes.Repeat([]byte{'s'}, 100)) }
			where := map[int]Pos{}
			for i := range 200 {
				payload := testPayload(i, 120)
				if i%3 == 0 {
					payload = secret(i)
				}
				p, err := l.Append(uint8(i%3), payload)
				if err != nil {
					t.Fatal(err)
				}
				where[i] = p
			}
			if err := l.Rotate(); err != nil {
				t.Fatal(err)
			}

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := l.Scan(Pos{}, func(Pos, uint8, []byte) error { return nil }); err != nil {
						t.Errorf("scan during compaction: %v", err)
						return
					}
				}
			})
			newPos := map[Pos]Pos{}
			for _, s := range l.Segments() {
				if !s.Sealed {
					continue
				}
				err := l.Compact(s.Seg, func(_ Pos, kind uint8, _ []byte) bool { return kind != 0 },
					func(old, new Pos) { newPos[old] = new })
				if err != nil {
					t.Fatalf("Compact(%d): %v", s.Seg, err)
				}
			}
			close(stop)
			wg.Wait()

			for i, p := range where {
				if i%3 == 0 {
					continue
				}
				if np, ok := newPos[p]; ok {
					p = np
				}
				kind, payload, err := l.Read(p)
				if err != nil || kind != uint8(i%3) || !bytes.Equal(payload, testPayload(i, 120)) {
					t.Fatalf("kept record %d at %v: kind %d, %d bytes, %v", i, p, kind, len(payload), err)
				}
			}
			if got := len(scanAll(t, l)); got != 200-67 {
				t.Fatalf("%d records after compaction, want %d", got, 200-67)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(b, []byte("SECRET")) || bytes.Contains(b, []byte("sssssssss")) {
					t.Fatalf("%s still holds bytes of a dropped record", e.Name())
				}
			}
			mustOpen(t, dir, opts)
		})
	}
}

type renameFailFS struct{ *crashFS }

func (renameFailFS) Rename(string, string) error { return errors.New("rename refused") }

// Compaction is crash-safe: once it returns, a crash keeps the compacted segment; if it fails
// before the rename, the old segment stays whole and the temporary file goes.
func TestCompactCrash(t *testing.T) {
	drop := func(_ Pos, kind uint8, _ []byte) bool { return kind != 0 }
	build := func(fs FS) *Log {
		l, err := Open(ddDir, Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			if _, err := l.Append(uint8(i%2), testPayload(i, 50)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Rotate(); err != nil {
			t.Fatal(err)
		}
		return l
	}

	fs := newCrashFS()
	l := build(fs)
	if err := l.Compact(1, drop, nil); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, ddDir, Options{FS: fs.crash(0)})
	l.Close()
	if got := scanAll(t, l2); len(got) != 3 {
		t.Fatalf("after compaction and a crash: %d records, want the 3 kept", len(got))
	}

	fs = newCrashFS()
	l = build(renameFailFS{fs})
	if err := l.Compact(1, drop, nil); err == nil {
		t.Fatal("Compact with a failing rename succeeded")
	}
	if got := scanAll(t, l); len(got) != 6 {
		t.Fatalf("after a failed compaction: %d records, want all 6", len(got))
	}
	l.Close()
	if names, _ := fs.List(ddDir); len(names) != 2 {
		t.Fatalf("files after a failed compaction: %v, want the two segments only", names)
	}
}
