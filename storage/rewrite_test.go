package storage

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "alice-secret-7f3a2b9c"

// tombstone mimics the engine's erasure marker.
func tombstone(old Event) (NewEvent, error) {
	data, _ := json.Marshal(map[string]any{
		"original_type": old.Type,
		"chain_hash":    hex.EncodeToString(old.Hash[:]),
	})
	return NewEvent{Type: "_was_tombstoned", Data: data, Metadata: json.RawMessage(`{"actor":{"type":"system","id":"system"}}`), Timestamp: old.Timestamp}, nil
}

func filesContaining(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			hits = append(hits, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestRewriteErasesEveryByte(t *testing.T) {
	for _, compress := range []int{-1, 64} {
		t.Run(fmt.Sprintf("compress=%d", compress), func(t *testing.T) {
			opts := testOptions()
			opts.CompressThreshold = compress
			opts.SegmentSize = 16 << 10
			s, dir := openChecked(t, opts)
			alice, bob, msg := key("user", "alice"), key("user", "bob"), key("message", "m1")
			for i := 0; i < 60; i++ {
				// Alice's events share records with Bob's, the record space and other streams.
				_, err := s.Commit(&Record{
					Appends: []Append{
						{Stream: alice, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_email_updated", map[string]any{"email": secret, "i": i})}},
						{Stream: bob, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_name_updated", map[string]any{"i": i})}},
					},
					Puts: []Put{{Space: "idem", Key: fmt.Sprintf("k%d", i), Value: []byte(fmt.Sprintf("v%d", i))}},
				})
				if err != nil {
					t.Fatal(err)
				}
				mustAppend(t, s, msg, ev("was_sent", map[string]any{"i": i}))
			}
			if err := s.PutSnapshot(alice, Snapshot{Length: 60, SpecVersion: 1, State: []byte(`{"email":"` + secret + `"}`)}); err != nil {
				t.Fatal(err)
			}
			bobBefore := allEvents(t, s, bob)
			msgBefore := allEvents(t, s, msg)
			aliceBefore := allEvents(t, s, alice)

			res, err := s.Rewrite(alice, tombstone)
			if err != nil {
				t.Fatal(err)
			}
			if res.Length != 60 {
				t.Fatalf("rewrite length: got %d, want 60", res.Length)
			}
			if hits := filesContaining(t, dir, []byte(secret)); len(hits) > 0 {
				t.Fatalf("erased payload still in %v", hits)
			}
			after := allEvents(t, s, alice)
			if len(after) != 60 {
				t.Fatalf("got %d events after rewrite, want 60", len(after))
			}
			for i, e := range after {
				if e.Type != "_was_tombstoned" || e.StreamID != aliceBefore[i].StreamID || e.Index != uint64(i+1) {
					t.Fatalf("event %d after rewrite: %+v", i+1, e)
				}
				if !bytes.Contains(e.Data, []byte(hex.EncodeToString(aliceBefore[i].Hash[:]))) {
					t.Fatalf("event %d does not keep its old chain hash", i+1)
				}
			}
			if bad, err := s.VerifyStream(alice); err != nil || bad != 0 {
				t.Fatalf("chain after rewrite: first bad %d, %v", bad, err)
			}
			if _, ok, _ := s.GetSnapshot(alice); ok {
				t.Fatal("snapshot survived the rewrite")
			}
			for name, want := range map[StreamKey][]Event{bob: bobBefore, msg: msgBefore} {
				got := allEvents(t, s, name)
				if len(got) != len(want) {
					t.Fatalf("%s: got %d events, want %d", name, len(got), len(want))
				}
				for i := range got {
					if dataOf(got[i]) != dataOf(want[i]) || got[i].Hash != want[i].Hash {
						t.Fatalf("%s event %d changed by another stream's rewrite", name, i+1)
					}
				}
			}
			for i := 0; i < 60; i++ {
				if v, err := s.Get("idem", fmt.Sprintf("k%d", i)); err != nil || string(v) != fmt.Sprintf("v%d", i) {
					t.Fatalf("record space k%d after rewrite: %q, %v", i, v, err)
				}
			}
			// Writes continue after the markers, and a second rewrite works too.
			mustAppend(t, s, alice, ev("was_created", map[string]any{"again": true}))
			if n := mustLength(t, s, alice); n != 61 {
				t.Fatalf("length after new write: %d", n)
			}
			if _, err := s.Rewrite(alice, tombstone); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRewriteSurvivesReopen(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	k := key("user", "alice")
	for i := 0; i < 10; i++ {
		mustAppend(t, s, k, ev("e", map[string]any{"email": secret}))
		mustAppend(t, s, key("user", "bob"), ev("e", i))
	}
	if _, err := s.Rewrite(k, tombstone); err != nil {
		t.Fatal(err)
	}
	want := allEvents(t, s, k)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "index.db"))
	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := allEvents(t, s2, k)
	for i := range got {
		if dataOf(got[i]) != dataOf(want[i]) || got[i].Hash != want[i].Hash {
			t.Fatalf("event %d differs after index rebuild", i+1)
		}
	}
}

// TestCarriesWaitForIndexRoom rewrites a stream whose 20 records each hold an event of another
// stream too, with an overlay bound that three carries reach: the job carries the other stream's
// events one record after another and waits for the index only at the end, so without a check
// of the bound before each carry they would pile up in the overlay past it. The store says in
// its log that commits wait for the index writer, and the other stream keeps its events.
func TestCarriesWaitForIndexRoom(t *testing.T) {
	// The store logs from its own goroutines; a file takes their writes as they come.
	logPath := filepath.Join(t.TempDir(), "store.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	logged := func() string {
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(logFile, nil))
	// A record of both streams puts a position and two events; a carry, a position and one
	// event.
	opts.overlayMaxEntries = 4
	s, _ := openChecked(t, opts)
	alice, bob := key("user", "alice"), key("user", "bob")
	for i := range 20 {
		_, err := s.Commit(&Record{Appends: []Append{
			{Stream: alice, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_email_updated", map[string]any{"email": secret, "i": i})}},
			{Stream: bob, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_name_updated", map[string]any{"i": i})}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		// Empty the overlay, so that only the carries can reach the bound.
		flushCommitted(t, s)
	}
	const waiting = "commits wait for the index writer"
	if log := logged(); strings.Contains(log, waiting) {
		t.Fatalf("a write before the rewrite waited for the index writer:\n%s", log)
	}
	bobBefore := allEvents(t, s, bob)

	if _, err := s.Rewrite(alice, tombstone); err != nil {
		t.Fatal(err)
	}
	if log := logged(); !strings.Contains(log, waiting) {
		t.Fatalf("20 carries went past an overlay bound of %d entries without waiting; log:\n%s", opts.overlayMaxEntries, log)
	}
	got := allEvents(t, s, bob)
	if len(got) != len(bobBefore) {
		t.Fatalf("%s has %d events after the rewrite, want %d", bob, len(got), len(bobBefore))
	}
	for i := range got {
		if dataOf(got[i]) != dataOf(bobBefore[i]) || got[i].Hash != bobBefore[i].Hash {
			t.Fatalf("%s event %d changed by the rewrite of %s", bob, i+1, alice)
		}
	}
}
