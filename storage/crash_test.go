package storage

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const crashChildEnv = "J17_STORAGE_CRASH_CHILD_DIR"

// crashChild commits from many goroutines until it is killed, printing one line per acknowledged
// write: "e <type> <id> <index> <hash>" per event and "p <key>" per record-space put. A rewriter
// keeps erasing one stream so that crashes also hit rewrites and compactions.
func crashChild(dir string) {
	s, err := Open(dir, Options{SegmentSize: 64 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	var out sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	report := func(lines []string) {
		out.Lock()
		for _, l := range lines {
			w.WriteString(l)
			w.WriteByte('\n')
		}
		w.Flush()
		out.Unlock()
	}
	pid := os.Getpid()
	for g := 0; g < 8; g++ {
		go func() {
			for n := 0; ; n++ {
				id := fmt.Sprintf("%d-%d-%d", pid, g, n)
				a := StreamKey{Type: "acct", ID: strconv.Itoa(g % 5)}
				b := StreamKey{Type: "ledger", ID: strconv.Itoa(n % 3)}
				data, _ := json.Marshal(map[string]any{"commit": id, "pad": strings.Repeat("x", 200)})
				rec := &Record{Appends: []Append{
					{Stream: a, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_debited", Data: data}}},
					{Stream: b, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_posted", Data: data}, {Type: "was_checked", Data: data}}},
				}, Puts: []Put{{Space: "commits", Key: id, Value: []byte("1")}}}
				res, err := s.Commit(rec)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child commit:", err)
					os.Exit(3)
				}
				lines := []string{"p " + id}
				evs := []StreamKey{a, b, b}
				for i, k := range evs {
					idx := res.Lengths[0]
					if i > 0 {
						idx = res.Lengths[1] - uint64(2-i)
					}
					e, err := s.Event(k, idx)
					if err != nil {
						fmt.Fprintln(os.Stderr, "child read:", err)
						os.Exit(4)
					}
					if e.StreamID != res.StreamIDs[i] {
						fmt.Fprintln(os.Stderr, "child: read back a different event")
						os.Exit(5)
					}
					lines = append(lines, fmt.Sprintf("e %s %s %d %s", k.Type, k.ID, idx, hex.EncodeToString(e.Hash[:])))
				}
				report(lines)
			}
		}()
	}
	victim := StreamKey{Type: "user", ID: "victim"}
	for {
		data, _ := json.Marshal(map[string]any{"email": "victim@example.com"})
		if _, err := s.Commit(&Record{Appends: []Append{{Stream: victim, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "had_email_updated", Data: data}}}}}); err != nil {
			os.Exit(6)
		}
		if _, err := s.Rewrite(victim, func(old Event) (NewEvent, error) {
			return NewEvent{Type: "_was_tombstoned", Data: json.RawMessage(`{}`)}, nil
		}); err != nil {
			fmt.Fprintln(os.Stderr, "child rewrite:", err)
			os.Exit(7)
		}
	}
}

type ackedEvent struct {
	k    StreamKey
	idx  uint64
	hash string
}

func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	var dir string
	var events []ackedEvent
	var puts []string
	total := 0
	const rounds, roundsPerDir = 20, 5
	for round := 0; round < rounds; round++ {
		// Each directory lives through several crashes; a fresh one every few rounds keeps the
		// full check of each round short.
		if round%roundsPerDir == 0 {
			total += len(events)
			dir, events, puts = t.TempDir(), nil, nil
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []string, 1)
		go func() {
			var got []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			lines <- got
		}()
		time.Sleep(time.Duration(30+rng.IntN(150)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		got := <-lines
		cmd.Wait()
		if strings.TrimSpace(stderr.String()) != "" {
			t.Fatalf("seed %d round %d: child failed: %s", seed, round, stderr.String())
		}
		for _, l := range got {
			f := strings.Fields(l)
			switch {
			case len(f) == 2 && f[0] == "p":
				puts = append(puts, f[1])
			case len(f) == 5 && f[0] == "e":
				idx, _ := strconv.ParseUint(f[3], 10, 64)
				events = append(events, ackedEvent{k: StreamKey{Type: f[1], ID: f[2]}, idx: idx, hash: f[4]})
			}
		}
		checkAfterCrash(t, dir, seed, round, events, puts)
	}
	total += len(events)
	if total == 0 {
		t.Fatalf("seed %d: no acknowledged commit in %d rounds", seed, rounds)
	}
	t.Logf("%d rounds, %d acknowledged events checked", rounds, total)
}

func checkAfterCrash(t *testing.T, dir string, seed int64, round int, events []ackedEvent, puts []string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Fatalf("seed %d round %d: %s", seed, round, fmt.Sprintf(format, args...))
	}
	// The parent only reads; skipping fsync here keeps the rounds short.
	opts := Options{SegmentSize: 64 << 10, NoSync: true}
	s, err := Open(dir, opts)
	if err != nil {
		fail("reopen: %v", err)
	}
	// No record is partial: each commit id is on exactly one acct event and two ledger events,
	// and has its put. Stream ids increase in log order (the victim's rewrites keep old ids, so
	// they are left out).
	var buf bytes.Buffer
	if _, err := s.Export(&buf); err != nil {
		fail("export: %v", err)
	}
	counts := map[string]int{}
	hashes := map[string]string{}
	var last StreamID
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var l ExportLine
		if err := json.Unmarshal(line, &l); err != nil {
			fail("export line: %v", err)
		}
		hashes[fmt.Sprintf("%s %d", l.Key, l.Index)] = l.Hash
		if l.AggregateType == "user" {
			continue
		}
		sid, _ := ParseStreamID(l.StreamID)
		if !last.Less(sid) {
			fail("stream id %s after %s", sid, last)
		}
		last = sid
		var d struct{ Commit string }
		json.Unmarshal(l.Data, &d)
		counts[d.Commit]++
	}
	for _, a := range events {
		if got := hashes[fmt.Sprintf("%s %d", a.k, a.idx)]; got != a.hash {
			fail("acknowledged %s event %d: got hash %q, want %s", a.k, a.idx, got, a.hash)
		}
	}
	stored := map[string]bool{}
	if err := s.Scan("commits", "", func(k string, _ []byte) error { stored[k] = true; return nil }); err != nil {
		fail("scan: %v", err)
	}
	for _, p := range puts {
		if !stored[p] {
			fail("acknowledged record %s lost", p)
		}
	}
	for id, n := range counts {
		if n != 3 {
			fail("commit %s has %d of its 3 events", id, n)
		}
		if !stored[id] {
			fail("commit %s has its events but not its put", id)
		}
	}
	if err := s.Close(); err != nil {
		fail("close: %v", err)
	}
	if err := Check(dir, opts); err != nil {
		fail("check: %v", err)
	}
}
