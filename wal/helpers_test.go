package wal

import (
	"errors"
	"fmt"
	"testing"
)

// mustOpen opens a log and, when the test ends, checks it: every record scans with a good
// checksum, positions increase, and Read agrees with Scan. Then it closes the log.
func mustOpen(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if l.closed.Load() {
			return
		}
		if err := checkLog(l); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

func checkLog(l *Log) error {
	var last *Pos
	return l.Scan(Pos{}, func(p Pos, kind uint8, payload []byte) error {
		if last != nil && !last.Less(p) {
			return fmt.Errorf("position %v after %v", p, *last)
		}
		last = &p
		k, b, err := l.Read(p)
		if err != nil {
			return fmt.Errorf("Read(%v): %w", p, err)
		}
		if k != kind || string(b) != string(payload) {
			return fmt.Errorf("Read(%v) = kind %d, %d bytes; Scan saw kind %d, %d bytes", p, k, len(b), kind, len(payload))
		}
		return nil
	})
}

// testPayload is the payload of record i: recognisable, of varying length, partly compressible.
func testPayload(i, size int) []byte {
	b := fmt.Appendf(nil, `{"i":%d,"pad":"`, i)
	for j := 0; len(b) < size-2; j++ {
		b = append(b, "abcdefghijklmnopqrstuvwxyz0123456789"[(i*7+j*j)%36])
	}
	return append(b, `"}`...)
}

type rec struct {
	pos     Pos
	kind    uint8
	payload string
}

func scanAll(t testing.TB, l *Log) []rec {
	t.Helper()
	var out []rec
	if err := l.Scan(Pos{}, func(p Pos, kind uint8, payload []byte) error {
		out = append(out, rec{p, kind, string(payload)})
		return nil
	}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return out
}
