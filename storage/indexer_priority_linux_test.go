//go:build linux

package storage

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadNices returns the nice value of each of the process's threads, by thread id.
func threadNices(t *testing.T) map[int]int {
	t.Helper()
	paths, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	nices := make(map[int]int)
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		// After the command's closing parenthesis come fields 3 on; the nice value is field 19.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if nice, err := strconv.Atoi(fields[16]); err == nil {
			nices[tid] = nice
		}
	}
	return nices
}

// TestIndexerRunsAtLowerPriority checks that a store's indexer runs on a thread at the process's
// nice value plus indexerNice, not the main thread, that no other thread changes, and that the
// thread ends when the store closes (Go ends a thread whose goroutine exits locked to it).
func TestIndexerRunsAtLowerPriority(t *testing.T) {
	// The thread running this test is at the process's nice value: a thread an earlier store's
	// indexer lowered ran only that indexer, and ended with it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNices(t)[syscall.Gettid()]
	want := min(base+indexerNice, 19)
	if want == base {
		t.Skipf("the process runs at nice %d already", base)
	}
	before := threadNices(t)
	s, err := Open(t.TempDir(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// changed lists the threads whose nice value is not what it was before Open (base for a
	// thread started since).
	changed := func() map[int]int {
		out := make(map[int]int)
		for tid, nice := range threadNices(t) {
			was, ok := before[tid]
			if !ok {
				was = base
			}
			if nice != was {
				out[tid] = nice
			}
		}
		return out
	}
	indexer := 0
	for deadline := time.Now().Add(10 * time.Second); indexer == 0; time.Sleep(10 * time.Millisecond) {
		switch c := changed(); len(c) {
		case 0:
			if time.Now().After(deadline) {
				t.Fatalf("no thread runs at nice %d (the process's is %d)", want, base)
			}
		case 1:
			for tid, nice := range c {
				if nice != want {
					t.Fatalf("thread %d runs at nice %d, want %d", tid, nice, want)
				}
				if tid == os.Getpid() {
					t.Fatalf("the indexer runs on the main thread")
				}
				indexer = tid
			}
		default:
			t.Fatalf("threads changed their nice values: %v; only the indexer's should", c)
		}
	}
	// The indexer still writes the index.
	mustAppend(t, s, key("order", "a"), ev("was_placed", nil))
	flushCommitted(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, alive := threadNices(t)[indexer]; !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the indexer's thread %d outlived the store", indexer)
		}
	}
}
