package wal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// childDirEnv tells a re-executed test binary to act as the writer child of TestKillNine.
const childDirEnv = "WAL_TEST_CHILD_DIR"

// A writer process killed with SIGKILL in the middle of appends loses nothing it acknowledged.
func TestKillNine(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		killChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNine$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[Pos]int{}
	sc := bufio.NewScanner(out)
	for len(acked) < 1500 && sc.Scan() {
		var p Pos
		var i int
		if _, err := fmt.Sscanf(sc.Text(), "%d %d %d", &p.Seg, &p.Off, &i); err != nil {
			t.Fatalf("child said %q: %v", sc.Text(), err)
		}
		acked[p] = i
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) < 1500 {
		t.Fatalf("child stopped after %d acknowledgements", len(acked))
	}

	l := mustOpen(t, dir, Options{SegmentSize: 64 << 10})
	got := map[Pos]string{}
	for _, r := range scanAll(t, l) {
		got[r.pos] = r.payload
	}
	for p, i := range acked {
		if got[p] != string(testPayload(i, 100+i%700)) {
			t.Fatalf("acknowledged record %d at %v lost or changed after kill -9", i, p)
		}
	}
}

// killChild appends from 8 goroutines until killed, printing "seg off i" for every
// acknowledged record.
func killChild(dir string) {
	l, err := Open(dir, Options{SegmentSize: 64 << 10, CompressThreshold: 256})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; ; i += 8 {
				p, err := l.Append(1, testPayload(i, 100+i%700))
				if err != nil {
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintf(w, "%d %d %d\n", p.Seg, p.Off, i)
				w.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
