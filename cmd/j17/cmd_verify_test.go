package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/audit"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/storage"
	bolt "go.etcd.io/bbolt"
)

// verifyFixture writes two streams into DATA/inst/staging, anchors them, erases one of them as a
// tombstone would, and exports the store. It returns the data dir, the export file and the
// anchor as JSON.
func verifyFixture(t *testing.T) (data, export string, anchor []byte) {
	t.Helper()
	data = t.TempDir()
	st, err := storage.Open(filepath.Join(data, "inst", "staging"), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		for _, id := range []string{"a", "b"} {
			_, err := st.Commit(&storage.Record{Appends: []storage.Append{{Stream: storage.StreamKey{Type: "user", ID: id}, Expect: storage.Expect{Kind: storage.Skip},
				Events: []storage.NewEvent{{Type: "was_noted", Data: json.RawMessage(`{"n":"secret ` + id + `"}`), Metadata: json.RawMessage(`{"timestamp":1}`), Timestamp: 1}}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	a, err := audit.CreateAnchor(st, time.Unix(100, 0), []string{"user"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if anchor, err = json.Marshal(a); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(200, 0)
	if _, err := st.Rewrite(storage.StreamKey{Type: "user", ID: "b"}, func(ev storage.Event) (storage.NewEvent, error) { return tombstone.Replace(ev, "t-1", at) }); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := st.Export(&buf); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	export = filepath.Join(t.TempDir(), "export.ndjson")
	if err := os.WriteFile(export, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, export, anchor
}

func TestVerify(t *testing.T) {
	data, export, anchor := verifyFixture(t)
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	tamperedExport := filepath.Join(t.TempDir(), "tampered.ndjson")
	if err := os.WriteFile(tamperedExport, bytes.Replace(raw, []byte(`"n":"secret a"`), []byte(`"n":"secret A"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	anchorFile := filepath.Join(t.TempDir(), "anchor.json")
	if err := os.WriteFile(anchorFile, anchor, 0o644); err != nil {
		t.Fatal(err)
	}
	var a audit.Anchor
	_ = json.Unmarshal(anchor, &a)
	a.Streams[0].Root = strings.Repeat("0", 64)
	badAnchor, _ := json.Marshal(a)

	cases := []struct {
		name   string
		args   []string
		status int
		out    string
	}{
		{"data directory", []string{data}, 0, "verify: ok"},
		{"store directory", []string{filepath.Join(data, "inst", "staging")}, 0, "verify: ok"},
		{"export", []string{export}, 0, "verify: ok"},
		{"export with anchor file", []string{"--anchor", anchorFile, export}, 0, "user:b was tombstoned (t-1)"},
		{"data directory with inline anchor", []string{"--anchor", string(anchor), data}, 0, "verifies over 2 streams"},
		{"tampered export", []string{tamperedExport}, 1, "hash chain breaks at event 1 (index 0, 0-based)"},
		{"tampered export with anchor", []string{"--anchor", anchorFile, tamperedExport}, 1, "stream user:a: missing"},
		{"anchor whose stream root changed", []string{"--anchor", string(badAnchor), export}, 1, "is not the root over its own streams"},
		{"no path", nil, 2, ""},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if got := cmdVerify(c.args, &stdout, &stderr); got != c.status {
			t.Errorf("%s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", c.name, got, c.status, stdout.String(), stderr.String())
			continue
		}
		if !strings.Contains(stdout.String(), c.out) {
			t.Errorf("%s: output lacks %q:\n%s", c.name, c.out, stdout.String())
		}
	}
}

// TestVerifyDamagedIndex: an index that does not decode is a difference from the log, which
// verify reports with the way to mend it; the store then opens with its index rebuilt, so the
// chains still verify.
func TestVerifyDamagedIndex(t *testing.T) {
	data, _, _ := verifyFixture(t)
	store := filepath.Join(data, "inst", "staging")
	db, err := bolt.Open(filepath.Join(store, "index.db"), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The index's watermark (storage/index_codec.go), one byte short.
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		v := meta.Get([]byte("state"))
		return meta.Put([]byte("state"), append([]byte(nil), v[:len(v)-1]...))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	var stdout, stderr bytes.Buffer
	if got := cmdVerify([]string{store}, &stdout, &stderr); got != 1 {
		t.Fatalf("exit %d, want 1; stdout:\n%s\nstderr:\n%s", got, stdout.String(), stderr.String())
	}
	for _, want := range []string{"index differs from the log", "undecodable index: bad watermark", "remove " + filepath.Join(store, "index.db"), "2 streams, 8 events read"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if got := cmdVerify([]string{store}, &stdout, &stderr); got != 0 || !strings.Contains(stdout.String(), "verify: ok") {
		t.Errorf("after the rebuild: exit %d, want 0:\n%s", got, stdout.String())
	}
}
