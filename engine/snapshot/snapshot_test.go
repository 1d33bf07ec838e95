package snapshot

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/j17-go/j17/storage"
)

func TestFingerprints(t *testing.T) {
	a := Fingerprints([]byte(`{"aggregate_types":{"u":{"events":{"e":{"handler":[{"set":{"target":"","value":"$.data"}}]}}},"v":{"events":{}}}}`))
	b := Fingerprints([]byte(`{"agent_types":["x"],"aggregate_types":{"v":{"events":{}},"u":{"events":{"e":{"handler":[{"set":{"value":"$.data","target":""}}]}}}}}`))
	c := Fingerprints([]byte(`{"aggregate_types":{"u":{"events":{"e":{"handler":[{"merge":{"target":"","value":"$.data"}}]}}},"v":{"events":{}}}}`))
	if a["u"] != b["u"] || a["v"] != b["v"] {
		t.Error("reordering keys or changing another part of the spec changed a fingerprint")
	}
	if a["u"] == c["u"] {
		t.Error("a handler change kept the fingerprint")
	}
	if a["v"] != c["v"] {
		t.Error("a handler change of another type changed this type's fingerprint")
	}
}

func TestPolicy(t *testing.T) {
	cases := []struct {
		every, base, length uint64
		due                 bool
	}{
		{0, 0, 999, false}, {0, 0, 1000, true}, {10, 5, 14, false}, {10, 5, 15, true},
	}
	for _, c := range cases {
		if got := (Policy{Every: c.every}).Due(c.base, c.length); got != c.due {
			t.Errorf("every %d base %d length %d: due %v, want %v", c.every, c.base, c.length, got, c.due)
		}
	}
}

func store(t *testing.T, streams map[string]int) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "s"), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for id, n := range streams {
		for i := 0; i < n; i++ {
			_, err := st.Commit(&storage.Record{Appends: []storage.Append{{Stream: storage.StreamKey{Type: "u", ID: id}, Expect: storage.Expect{Kind: storage.Skip},
				Events: []storage.NewEvent{{Type: "e", Data: []byte(`{}`), Metadata: []byte(`{}`)}}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

func TestLoadHonoursTheFingerprint(t *testing.T) {
	st := store(t, map[string]int{"a": 3})
	k := storage.StreamKey{Type: "u", ID: "a"}
	if err := Save(st, k, 7, 2, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if v, n, ok, err := Load(st, k, 7); err != nil || !ok || n != 2 || v.Get("x").Num() != 1 {
		t.Errorf("same fingerprint: %v %d %v %v", v, n, ok, err)
	}
	if _, _, ok, _ := Load(st, k, 8); ok {
		t.Error("another fingerprint loaded the snapshot")
	}
}

func TestCheckpointLifecycleNeverTouchesEvents(t *testing.T) {
	st := store(t, map[string]int{"a": 3, "b": 2})
	now := time.Unix(1700000000, 0)
	// A state with what encoding/json escapes, in an array that reads keep as text.
	const stateA = "{\"n\":3,\"notes\":[\"<b>&amp;</b>\",\"\u2028\"]}"
	cp, err := CreateCheckpoint(st, now, "u", "", 9, []Member{{ID: "a", Length: 3, State: []byte(stateA)}, {ID: "b", Length: 5, State: []byte(`{"n":5}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Root || cp.Count != 2 || cp.CreatedAt != now.Unix() {
		t.Errorf("checkpoint %+v", cp)
	}
	list, err := Checkpoints(st)
	if err != nil || len(list) != 1 || list[0].ID != cp.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := RestoreCheckpoint(st, cp.ID, 10); !errors.Is(err, ErrStale) {
		t.Errorf("restore under other handlers: %v, want ErrStale", err)
	}
	n, err := RestoreCheckpoint(st, cp.ID, 9)
	if err != nil || n != 1 {
		t.Errorf("restore: %d %v; want 1 (b's state is longer than its stream)", n, err)
	}
	if v, l, ok, _ := Load(st, storage.StreamKey{Type: "u", ID: "a"}, 9); !ok || l != 3 {
		t.Errorf("restored snapshot of a: length %d ok %v", l, ok)
	} else if got := v.String(); got != stateA {
		t.Errorf("restored state of a is written as %s, want %s as it was", got, stateA)
	}
	if err := DeleteCheckpoint(st, cp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := GetCheckpoint(st, cp.ID); !errors.Is(err, ErrCheckpointNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if _, err := GetCheckpoint(st, "../h/x"); !errors.Is(err, ErrCheckpointNotFound) {
		t.Errorf("malformed id: %v", err)
	}
	for id, want := range map[string]uint64{"a": 3, "b": 2} {
		if n, _ := st.Length(storage.StreamKey{Type: "u", ID: id}); n != want {
			t.Errorf("stream %s has %d events after checkpoint operations, want %d", id, n, want)
		}
	}
}
