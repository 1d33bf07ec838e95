package tombstone

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
)

func TestRefPuts(t *testing.T) {
	ev := func(meta string) storage.NewEvent {
		return storage.NewEvent{Type: "x", Metadata: json.RawMessage(meta)}
	}
	msg := storage.StreamKey{Type: "message", ID: "m1"}
	cases := []struct {
		name string
		in   []storage.Append
		want []string
	}{
		{"actor and target", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"},"target":{"type":"user","id":"bob"}}`)}}},
			[]string{"actor\x00user\x00alice\x00message\x00@message:m1", "target\x00user\x00bob\x00message\x00@message:m1"}},
		{"one put per entity and stream", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"}}`), ev(`{"actor":{"type":"user","id":"alice"}}`)}}},
			[]string{"actor\x00user\x00alice\x00message\x00@message:m1"}},
		{"the same metadata on two streams", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"}}`)}}, {Stream: storage.StreamKey{Type: "message", ID: "m2"}, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"}}`)}}},
			[]string{"actor\x00user\x00alice\x00message\x00@message:m1", "actor\x00user\x00alice\x00message\x00@message:m2"}},
		{"metadata without refs", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"timestamp":1}`), ev(`not json`), {Type: "x"}}}}, nil},
		{"id with a NUL is skipped", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"a\u0000b"}}`)}}}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, p := range AppendRefPuts(nil, c.in, cascadingMessages(t)) {
			if p.Space != RefSpace {
				t.Errorf("%s: put in space %q, want %q", c.name, p.Space, RefSpace)
			}
			got = append(got, refOf(p))
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// loadSpec loads a spec document of the test.
func loadSpec(tb testing.TB, doc string) *spec.Spec {
	tb.Helper()
	sp, report := spec.Load([]byte(doc))
	if !report.OK() {
		tb.Fatal(report.Err())
	}
	return sp
}

// cascadingMessages is a spec whose message streams cascade in both roles, so that every
// reference to them is kept.
func cascadingMessages(tb testing.TB) *spec.Spec {
	return loadSpec(tb, `{"agent_types":["user"],"target_types":["user"],"aggregate_types":{
		"message":{"events":{"x":{"schema":{"type":"object"},"handler":[]}},"onTombstone":{"actor":"cascade","target":"cascade"}}}}`)
}

// A record carries the references of the roles in which its streams' types cascade, and only
// those: discovery reads no other.
func TestRefPutsFollowCascades(t *testing.T) {
	sp := loadSpec(t, `{"agent_types":["user"],"target_types":["user"],"aggregate_types":{
		"message":{"events":{"x":{"schema":{"type":"object"},"handler":[]}},"onTombstone":{"actor":"cascade","target":"preserve"}},
		"note":{"events":{"x":{"schema":{"type":"object"},"handler":[]}},"onTombstone":{"target":"cascade"}},
		"order":{"events":{"x":{"schema":{"type":"object"},"handler":[]}},"onTombstone":{"actor":"preserve","target":"preserve"}},
		"user":{"events":{"x":{"schema":{"type":"object"},"handler":[]}}}}}`)
	meta := json.RawMessage(`{"actor":{"type":"user","id":"alice"},"target":{"type":"user","id":"bob"}}`)
	var apps []storage.Append
	for _, typ := range []string{"message", "note", "order", "user", "unknown"} {
		apps = append(apps, storage.Append{Stream: storage.StreamKey{Type: typ, ID: "s1"}, Events: []storage.NewEvent{{Type: "x", Metadata: meta}}})
	}
	var got []string
	for _, p := range AppendRefPuts(nil, apps, sp) {
		got = append(got, refOf(p))
	}
	want := []string{"actor\x00user\x00alice\x00message\x00@message:s1", "target\x00user\x00bob\x00note\x00@note:s1"}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if puts := AppendRefPuts(nil, apps, nil); len(puts) != 0 {
		t.Errorf("without a spec: %d puts, want none", len(puts))
	}
}

// refOf shows a reference put as its key, "@" and the stream whose age and id complete the key.
func refOf(p storage.Put) string { return p.Key + "@" + p.Stream.String() }

// refPutKeysByDecoder is the index keys of one event's metadata as the JSON decoder reads it:
// the reference the decoder-free path of AppendRefPuts must match.
func refPutKeysByDecoder(meta string, stream storage.StreamKey) []string {
	var m refMeta
	if json.Unmarshal([]byte(meta), &m) != nil {
		return nil
	}
	var keys []string
	for _, r := range [...]struct {
		role string
		ref  *ref
	}{{RoleActor, m.Actor}, {RoleTarget, m.Target}} {
		if r.ref != nil && (rawRef{typ: []byte(r.ref.Type), id: []byte(r.ref.ID)}).usable() {
			keys = append(keys, refPrefix(r.role, storage.StreamKey{Type: r.ref.Type, ID: r.ref.ID}, stream.Type)+"@"+stream.String())
		}
	}
	return keys
}

// The write path's metadata layout is read without the decoder; these near misses of it must
// give what the decoder gives.
func TestRefPutsMatchTheDecoder(t *testing.T) {
	msg := storage.StreamKey{Type: "message", ID: "m1"}
	for _, meta := range []string{
		`{"actor":{"id":"alice","type":"user"},"timestamp":1741444200}`,
		`{"actor":{"id":"alice","type":"user"},"target":{"id":"bob","type":"user"},"timestamp":0}`,
		`{"actor":{"id":"alice","type":"user"},"target":{"id":"bob","type":"user"},"timestamp":-5}`,
		`{"actor":{"id":"alice","type":"user"},"timestamp":01}`,
		`{"actor":{"id":"alice","type":"user"},"timestamp":1} `,
		`{"actor":{"id":"alice","type":"user"},"timestamp":1}x`,
		`{"actor":{"id":"alice","type":"user"},"timestamp":1.5}`,
		`{"actor":{"id":"al\u0069ce","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"al\"ice","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"àlice","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"id":"x"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:o1"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:o1"},"target":{"id":"bob","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":01,"event_type":"was_placed","key":"order:o1"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:\u006f1"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"o"}"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"o","x":2},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"Target":{"id":"bob","type":"user"},"timestamp":1}`,
		`{"Actor":{"id":"carol","type":"user"},"actor":{"id":"alice","type":"user"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user","x":1},"timestamp":1}`,
		`{"actor":{"type":"user","id":"alice"},"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"},"target":null,"timestamp":1}`,
		`{"actor":{"id":"alice","type":"user"}}`,
		`{"actor":{"id":"alice","type":"user"},"timestamp":1`,
	} {
		var got []string
		for _, p := range AppendRefPuts(nil, []storage.Append{{Stream: msg, Events: []storage.NewEvent{{Type: "x", Metadata: json.RawMessage(meta)}}}}, cascadingMessages(t)) {
			got = append(got, refOf(p))
		}
		if want := refPutKeysByDecoder(meta, msg); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("%s: got %q, want %q", meta, got, want)
		}
	}
}

// Implied events carry implied_by; their metadata is read without the decoder too.
func TestRefPutsReadImpliedMetadata(t *testing.T) {
	meta := `{"actor":{"id":"alice","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:o1"},"timestamp":1}`
	refs, ok := parseWriteMetadata([]byte(meta))
	if !ok || string(refs[0].id) != "alice" || string(refs[0].typ) != "user" || refs[1].typ != nil {
		t.Errorf("got %q, %v; want the actor alice and no target", refs, ok)
	}
}

// Many distinct entities in one record switch the dedup to a map; every put is still there once.
func TestRefPutsManyEntities(t *testing.T) {
	msg := storage.StreamKey{Type: "message", ID: "m1"}
	var evs []storage.NewEvent
	for i := 0; i < 3*smallRefs; i++ {
		meta := fmt.Sprintf(`{"actor":{"id":"a%d","type":"user"},"target":{"id":"t%d","type":"user"},"timestamp":1}`, i%(2*smallRefs), i)
		evs = append(evs, storage.NewEvent{Type: "x", Metadata: json.RawMessage(meta)})
	}
	puts := AppendRefPuts([]storage.Put{{Space: "other", Key: "k"}}, []storage.Append{{Stream: msg, Events: evs}}, cascadingMessages(t))
	seen := map[string]bool{}
	for _, p := range puts[1:] {
		if seen[p.Key] {
			t.Errorf("put %q twice", p.Key)
		}
		seen[p.Key] = true
	}
	if want := 2*smallRefs + 3*smallRefs; len(seen) != want || puts[0].Key != "k" {
		t.Errorf("%d distinct puts (first %q), want %d after the caller's", len(seen), puts[0].Key, want)
	}
}

// A reference to a stream its append expects empty cannot be live yet: a plain put. Any other
// may be live already: an IfAbsent put, which the store drops when it knows the key. Both ways
// of building keys (parts, and the map past smallRefs distinct puts) carry the flag.
func TestRefPutsIfAbsent(t *testing.T) {
	meta := json.RawMessage(`{"actor":{"type":"user","id":"alice"}}`)
	for _, c := range []struct {
		name   string
		expect storage.Expect
		want   bool
	}{
		{"new stream, internal OCC", storage.Expect{Kind: storage.Any}, false},
		{"new stream, previous_length 0", storage.Expect{Kind: storage.Exactly}, false},
		{"existing stream", storage.Expect{Kind: storage.Any, Length: 3}, true},
		{"implied append", storage.Expect{Kind: storage.Skip}, true},
	} {
		for _, streams := range []int{1, 2 * smallRefs} {
			var apps []storage.Append
			for i := range streams {
				apps = append(apps, storage.Append{Stream: storage.StreamKey{Type: "message", ID: fmt.Sprint("m", i)}, Expect: c.expect, Events: []storage.NewEvent{{Type: "x", Metadata: meta}}})
			}
			puts := AppendRefPuts(nil, apps, cascadingMessages(t))
			if len(puts) != streams {
				t.Fatalf("%s, %d streams: %d puts", c.name, streams, len(puts))
			}
			for _, p := range puts {
				if p.IfAbsent != c.want {
					t.Errorf("%s, %d streams: put %q IfAbsent=%v, want %v", c.name, streams, p.Key, p.IfAbsent, c.want)
				}
			}
		}
	}
}

// Discovery reads the stream id from keys the store completed with a first timestamp and from
// keys written before that, which end in the id alone.
func TestRefStreamID(t *testing.T) {
	for _, c := range []struct{ rest, want string }{
		{"0000000065a4e2a0\x00c0000000-0000-4000-a000-000000000001", "c0000000-0000-4000-a000-000000000001"},
		{"fffffffffffffffe\x00global", "global"},
		{"c0000000-0000-4000-a000-000000000001", "c0000000-0000-4000-a000-000000000001"},
		{"0000000065a4e2a0", "0000000065a4e2a0"},
		{"global", "global"},
	} {
		if got := refStreamID(c.rest); got != c.want {
			t.Errorf("refStreamID(%q) = %q, want %q", c.rest, got, c.want)
		}
	}
}

// Discovery finds an entity's streams by their references where the engine says the index is
// complete, and by reading every stream elsewhere: there it also finds the streams written
// without references (under a spec version whose rules did not read them).
func TestDiscoverReadsStreamsWithoutReferences(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := cascadingMessages(t)
	alice := storage.StreamKey{Type: "user", ID: "alice"}
	write := func(id, meta string, refs bool) {
		t.Helper()
		apps := []storage.Append{{Stream: storage.StreamKey{Type: "message", ID: id}, Events: []storage.NewEvent{{Type: "x", Data: json.RawMessage(`{}`), Metadata: json.RawMessage(meta)}}}}
		rec := &storage.Record{Appends: apps}
		if refs {
			rec.Puts = AppendRefPuts(nil, apps, sp)
		}
		if _, err := st.Commit(rec); err != nil {
			t.Fatal(err)
		}
	}
	write("m1", `{"actor":{"type":"user","id":"alice"}}`, true)
	write("m2", `{"actor":{"type":"user","id":"alice"}}`, false)
	write("m3", `{"actor":{"type":"user","id":"bob"},"target":{"type":"user","id":"alice"}}`, false)
	write("m4", `{"actor":{"type":"user","id":"bob"}}`, false)
	for _, c := range []struct {
		name     string
		complete func(role, typ string) (bool, error)
		want     string
	}{
		{"index complete", func(string, string) (bool, error) { return true, nil }, "[message:m1]"},
		{"index incomplete", func(string, string) (bool, error) { return false, nil }, "[message:m1 message:m2 message:m3]"},
		{"no answer", nil, "[message:m1 message:m2 message:m3]"},
		{"target role incomplete", func(role, _ string) (bool, error) { return role == RoleActor, nil }, "[message:m1 message:m3]"},
	} {
		got, err := Discover(st, sp, alice, c.complete)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
