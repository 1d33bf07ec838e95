package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/j17-go/j17/wal"
	"github.com/klauspost/compress/s2"
)

const (
	eraseSecret = "erase-secret-5d1c9e0a"
	keepToken   = "keep-token-88b1f4"
)

// eraseFindings names where tok remains in dir: in the bytes of any file, in an S2 or Snappy
// encoding of it, or in any log record once decompressed. The store must be closed.
func eraseFindings(t *testing.T, dir, tok string) []string {
	t.Helper()
	hits := filesContaining(t, dir, []byte(tok))
	for _, n := range [][]byte{s2.Encode(nil, []byte(tok)), s2.EncodeBetter(nil, []byte(tok)), s2.EncodeSnappy(nil, []byte(tok))} {
		hits = append(hits, filesContaining(t, dir, n)...)
	}
	w, err := wal.Open(filepath.Join(dir, "log"), wal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Scan(wal.Pos{}, func(pos wal.Pos, _ uint8, payload []byte) error {
		if bytes.Contains(payload, []byte(tok)) {
			hits = append(hits, "log record at "+pos.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// eraseStory writes records in which the values of state/a and state/b (holding the secret, in
// several versions) share records with bob's events and other keys. It returns bob's events.
func eraseStory(t *testing.T, s *Store) []Event {
	t.Helper()
	bob := key("user", "bob")
	for i := 0; i < 40; i++ {
		big := strings.Repeat(fmt.Sprintf("%s-%d ", eraseSecret, i), 20)
		_, err := s.Commit(&Record{
			Appends: []Append{{Stream: bob, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_name_updated", map[string]any{"keep": keepToken, "i": i})}}},
			Puts: []Put{
				{Space: "state", Key: "a", Value: []byte(big)},
				{Space: "state", Key: fmt.Sprintf("other/%d", i), Value: []byte(fmt.Sprintf("%s-%d", keepToken, i))},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := s.Commit(&Record{Puts: []Put{{Space: "state", Key: "b", Value: []byte(big)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A value many index pages long lands in overflow pages; the index transactions that follow
	// reuse only part of them once the key is deleted, so without a vacuum index.db keeps the
	// value in free pages.
	huge := strings.Repeat(eraseSecret+" ", 8000)
	if _, err := s.Commit(&Record{Puts: []Put{{Space: "state", Key: "b", Value: []byte(huge)}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		flushCommitted(t, s)
		if _, err := s.Commit(&Record{Puts: []Put{{Space: "tail", Key: fmt.Sprint(i), Value: bytes.Repeat([]byte{'v'}, 300)}}}); err != nil {
			t.Fatal(err)
		}
	}
	return allEvents(t, s, bob)
}

// eraseKeys redacts state/a and deletes state/b.
func eraseKeys(s *Store) error {
	return s.Erase([]Put{{Space: "state", Key: "a", Value: []byte(`"redacted"`)}}, []Delete{{Space: "state", Key: "b"}})
}

// checkErased verifies a closed store after Erase: no trace of the secret, everything else
// intact, and the index equal to a rebuild.
func checkErased(t *testing.T, dir string, opts Options, bobBefore []Event) {
	t.Helper()
	if hits := eraseFindings(t, dir, eraseSecret); len(hits) > 0 {
		t.Fatalf("erased values remain in %v", hits)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatalf("check after erase: %v", err)
	}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Get("state", "a"); err != nil || string(v) != `"redacted"` {
		t.Errorf("state/a: got %q, %v; want the redacted value", v, err)
	}
	if v, err := s.Get("state", "b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("state/b: got %q, %v; want it deleted", v, err)
	}
	for i := 0; i < 40; i++ {
		want := fmt.Sprintf("%s-%d", keepToken, i)
		if v, err := s.Get("state", fmt.Sprintf("other/%d", i)); err != nil || string(v) != want {
			t.Errorf("state/other/%d: got %q, %v; want %q", i, v, err, want)
		}
	}
	got := allEvents(t, s, key("user", "bob"))
	if len(got) != len(bobBefore) {
		t.Fatalf("bob: got %d events, want %d", len(got), len(bobBefore))
	}
	for i := range got {
		if dataOf(got[i]) != dataOf(bobBefore[i]) || got[i].Hash != bobBefore[i].Hash || got[i].StreamID != bobBefore[i].StreamID {
			t.Fatalf("bob event %d: got %s, want %s", i+1, dataOf(got[i]), dataOf(bobBefore[i]))
		}
	}
}

func TestEraseRemovesEveryOlderValue(t *testing.T) {
	for _, compress := range []int{-1, 64} {
		t.Run(fmt.Sprintf("compress=%d", compress), func(t *testing.T) {
			opts := testOptions()
			opts.CompressThreshold = compress
			opts.SegmentSize = 16 << 10
			dir := t.TempDir()
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			bobBefore := eraseStory(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if hits := filesContaining(t, dir, []byte(eraseSecret)); !slices.Contains(hits, filepath.Join(dir, "index.db")) {
				t.Fatalf("before Erase the secret is in %v, not in index.db; the test would prove less", hits)
			}
			if s, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
			if err := eraseKeys(s); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkErased(t, dir, opts, bobBefore)
		})
	}
}

// TestEraseResumesAfterCrash copies the store's files at every step of the erasure, as a crash
// there would leave them, and checks that opening each copy finishes the job.
func TestEraseResumesAfterCrash(t *testing.T) {
	opts := testOptions()
	opts.CompressThreshold = 64
	opts.SegmentSize = 16 << 10
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bobBefore := eraseStory(t, s)
	crashes := map[string]string{}
	s.stepHook = func(step string) {
		s.mu.Lock()
		last := s.mu.lsn
		s.mu.Unlock()
		if err := s.flush(last); err != nil {
			t.Error(err)
			return
		}
		name := fmt.Sprintf("%02d-%s", len(crashes), step)
		crashes[name] = filepath.Join(t.TempDir(), name)
		copyDir(t, dir, crashes[name])
	}
	if err := eraseKeys(s); err != nil {
		t.Fatal(err)
	}
	steps := map[string]bool{}
	for name := range crashes {
		steps[name[3:]] = true
	}
	for _, want := range []string{"recorded", "carried", "compacted", "copied", "vacuumed"} {
		if !steps[want] {
			t.Errorf("no crash copy at step %s; got %v", want, steps)
		}
	}
	for name, d := range crashes {
		t.Run(name, func(t *testing.T) {
			if name[3:] == "copied" {
				if _, err := os.Stat(filepath.Join(d, "index.db"+vacuumSuffix)); err != nil {
					t.Fatalf("a crash while vacuuming leaves the copy: %v", err)
				}
			}
			s, err := Open(d, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkErased(t, d, opts, bobBefore)
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
