package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/j17-go/j17/merkle"
	"github.com/j17-go/j17/storage/canonical"
)

func TestExportImportRoundTrip(t *testing.T) {
	src, _ := openChecked(t, testOptions())
	for i := 0; i < 30; i++ {
		_, err := src.Commit(&Record{Appends: []Append{
			{Stream: key("order", "o1"), Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("had_item_added", map[string]any{"i": i, "price": 29.99})}},
			{Stream: key("inventory", "w"), Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("was_reserved", map[string]any{"i": i})}},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(t, src, key("user", "alice"), ev("was_created", map[string]any{"email": secret}))
	if _, err := src.Rewrite(key("user", "alice"), tombstone); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	n, err := src.Export(&first)
	if err != nil {
		t.Fatal(err)
	}
	if n != 61 {
		t.Fatalf("exported %d events, want 61", n)
	}
	if strings.Contains(first.String(), secret) {
		t.Fatal("export holds a rewritten event's old payload")
	}
	verifyExportOffline(t, first.Bytes())

	dst, _ := openChecked(t, testOptions())
	m, err := dst.Import(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if m != n {
		t.Fatalf("imported %d events, want %d", m, n)
	}
	var second bytes.Buffer
	if _, err := dst.Export(&second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Fatalf("round trip differs:\n%s\nvs\n%s", first.String(), second.String())
	}
	for _, k := range []StreamKey{key("order", "o1"), key("inventory", "w"), key("user", "alice")} {
		if bad, err := dst.VerifyStream(k); err != nil || bad != 0 {
			t.Fatalf("%s: chain after import: first bad %d, %v", k, bad, err)
		}
	}
	// New ids continue after the imported ones.
	res := mustAppend(t, dst, key("order", "o1"), ev("was_paid", 1))
	info, _ := src.Info(key("order", "o1"))
	if !info.LastStreamID.Less(res.StreamIDs[0]) {
		t.Fatalf("new id %s does not follow imported %s", res.StreamIDs[0], info.LastStreamID)
	}
}

// verifyExportOffline recomputes every chain from the export alone, as `j17 verify` does.
func verifyExportOffline(t *testing.T, export []byte) {
	t.Helper()
	chains := map[string][32]byte{}
	for i, line := range bytes.Split(bytes.TrimSpace(export), []byte("\n")) {
		var l ExportLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		obj, _ := json.Marshal(map[string]any{"data": l.Data, "key": l.Key, "metadata": l.Metadata, "type": l.Type})
		canon, err := canonical.Canonicalize(obj)
		if err != nil {
			t.Fatal(err)
		}
		h := merkle.ChainNext(chains[l.Key], sha256.Sum256(canon))
		if hex.EncodeToString(h[:]) != l.Hash {
			t.Fatalf("line %d: offline chain %x, export says %s", i+1, h, l.Hash)
		}
		chains[l.Key] = h
	}
}

func TestImportRejectsTamperedExport(t *testing.T) {
	src, _ := openChecked(t, testOptions())
	mustAppend(t, src, key("order", "o1"), ev("was_placed", map[string]any{"total": 10}), ev("was_paid", map[string]any{"total": 10}))
	var buf bytes.Buffer
	if _, err := src.Export(&buf); err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(buf.String(), `"total":10}`, `"total":11}`, 1)
	dst, _ := openChecked(t, testOptions())
	if _, err := dst.Import(strings.NewReader(tampered)); !errors.Is(err, ErrChainMismatch) {
		t.Fatalf("got %v, want ErrChainMismatch", err)
	}
	if n := mustLength(t, dst, key("order", "o1")); n != 0 {
		t.Fatalf("tampered batch partly imported: length %d", n)
	}
}

func TestSnapshots(t *testing.T) {
	s, dir := openChecked(t, testOptions())
	k := key("order", "o1")
	mustAppend(t, s, k, ev("a", 1), ev("b", 2), ev("c", 3))
	if _, ok, err := s.GetSnapshot(k); ok || err != nil {
		t.Fatalf("empty: got ok=%v err=%v", ok, err)
	}
	if err := s.PutSnapshot(k, Snapshot{Length: 2, SpecVersion: 7, State: []byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.GetSnapshot(k)
	if err != nil || !ok || got.Length != 2 || got.SpecVersion != 7 || string(got.State) != `{"n":2}` {
		t.Fatalf("got %+v ok=%v err=%v", got, ok, err)
	}
	// A torn snapshot reads as absent.
	path := s.snapshotPath(k)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.GetSnapshot(k); ok || err != nil {
		t.Fatalf("torn: got ok=%v err=%v, want absent", ok, err)
	}
	// A snapshot ahead of the stream reads as absent.
	if err := s.PutSnapshot(k, Snapshot{Length: 9, SpecVersion: 7}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.GetSnapshot(k); ok {
		t.Fatal("snapshot ahead of the stream was returned")
	}
	if err := s.DropSnapshot(k); err != nil {
		t.Fatal(err)
	}
	if hits := filesContaining(t, dir, []byte(`{"n":2}`)); len(hits) > 0 {
		t.Fatalf("dropped snapshot still in %v", hits)
	}
}
