package write

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
)

const testSpec = `{
  "singletons": ["all"],
  "agent_types": ["user"],
  "target_types": ["order"],
  "aggregate_types": {
    "user": {"events": {
      "was_created": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, "handler": []},
      "was_seen": {"allow_skip_occ": true, "schema": {"type": "object"}, "handler": []},
      "was_linked": {"schema": {"type": "object"}, "handler": [],
        "implications": [{"emit": {"aggregate_type": "user", "id": "$.key", "event_type": "was_seen", "data": {}}}]}
    }}
  }
}`

const actor = `"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}`

func loadSpec(t testing.TB) (*spec.Spec, ident.Rules) {
	t.Helper()
	sp, report := spec.Load([]byte(testSpec))
	if !report.OK() {
		t.Fatal(report.Err())
	}
	return sp, ident.NewRules(sp.Singletons())
}

func TestPrepareRefusals(t *testing.T) {
	sp, rules := loadSpec(t)
	uid := "a0000000-0000-4000-a000-000000000002"
	cases := []struct {
		name, typ, id, event, body string
		prod                       bool
		kind                       error
		path                       string
		index                      int // -1: no event_index
	}{
		{"unknown type", "ship", uid, "was_created", `{}`, false, problem.ErrNotFound, "", -1},
		{"unknown event", "user", uid, "was_gone", `{}`, false, problem.ErrNotFound, "", -1},
		{"reserved event", "user", uid, "_was_tombstoned", `{}`, false, problem.ErrNotFound, "", -1},
		{"empty body", "user", uid, "was_created", ``, false, problem.ErrMalformed, "", -1},
		{"not json", "user", uid, "was_created", `{"data"`, false, problem.ErrMalformed, "", -1},
		{"array body", "user", uid, "was_created", `[]`, false, problem.ErrMalformed, "", -1},
		// JSON text is UTF-8 (RFC 8259); the store would refuse the string at commit.
		{"invalid UTF-8 in data", "user", uid, "was_created", "{\"data\":{\"name\":\"\xa5\"}," + actor + "}", false, problem.ErrMalformed, "", -1},
		{"invalid UTF-8 in a batch", "user", uid, "", "{\"events\":[{\"type\":\"was_created\",\"data\":{\"name\":\"\xa5\"}}]," + actor + "}", false, problem.ErrMalformed, "", -1},
		{"null data", "user", uid, "was_created", `{"data":null,` + actor + `}`, false, problem.ErrMalformed, "data", -1},
		{"metadata not object", "user", uid, "was_created", `{"data":{"name":"a"},"metadata":3}`, false, problem.ErrMalformed, "metadata", -1},
		{"actor id not string", "user", uid, "was_created", `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":1}}}`, false, problem.ErrMalformed, "metadata.actor.id", -1},
		{"bad key", "user", "nope", "was_created", `{"data":{"name":"a"},` + actor + `}`, false, problem.ErrInvalid, "key", -1},
		{"bad uuid version", "user", "a0000000-0000-1000-a000-000000000002", "was_created", `{"data":{"name":"a"},` + actor + `}`, false, problem.ErrInvalid, "key", -1},
		{"schema", "user", uid, "was_created", `{"data":{},` + actor + `}`, false, problem.ErrInvalid, "data", -1},
		{"timestamp in prod", "user", uid, "was_created", `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":"all"},"timestamp":5}}`, true, problem.ErrInvalid, "metadata.timestamp", -1},
		{"timestamp string", "user", uid, "was_created", `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":"all"},"timestamp":"5"}}`, false, problem.ErrInvalid, "metadata.timestamp", -1},
		{"previous_length negative", "user", uid, "was_created", `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":"all"},"previous_length":-1}}`, false, problem.ErrMalformed, "metadata.previous_length", -1},
		{"skip_occ not boolean", "user", uid, "was_seen", `{"data":{},"metadata":{"actor":{"type":"user","id":"all"},"skip_occ":"yes"}}`, false, problem.ErrMalformed, "metadata.skip_occ", -1},
		{"skip_occ with previous_length", "user", uid, "was_seen", `{"data":{},"metadata":{"actor":{"type":"user","id":"all"},"skip_occ":true,"previous_length":0}}`, false, problem.ErrInvalid, "metadata.skip_occ", -1},
		{"too deep", "user", uid, "was_seen", `{"data":` + strings.Repeat("[", 101) + strings.Repeat("]", 101) + `,` + actor + `}`, false, problem.ErrInvalid, "data", -1},
		{"batch events not array", "user", uid, "", `{"events":{},` + actor + `}`, false, problem.ErrMalformed, "events", -1},
		{"batch event without type", "user", uid, "", `{"events":[{"type":"was_seen"},{"data":{}}],` + actor + `}`, false, problem.ErrMalformed, "type", 1},
		{"batch schema", "user", uid, "", `{"events":[{"type":"was_seen"},{"type":"was_created","data":{}}],` + actor + `}`, false, problem.ErrInvalid, "data", 1},
		{"batch skip_occ on a type without it", "user", uid, "", `{"events":[{"type":"was_seen"},{"type":"was_created","data":{"name":"a"}}],"metadata":{"actor":{"type":"user","id":"all"},"skip_occ":true}}`, false, problem.ErrInvalid, "metadata.skip_occ", -1},
	}
	for _, c := range cases {
		_, err := Prepare(sp, rules, Input{AggregateType: c.typ, ID: c.id, EventType: c.event, Body: []byte(c.body), Now: time.Unix(100, 0), Prod: c.prod})
		var pe *problem.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *problem.Error", c.name, err)
			continue
		}
		idx := -1
		if pe.EventIndex != nil {
			idx = *pe.EventIndex
		}
		if !errors.Is(err, c.kind) || pe.Path != c.path || idx != c.index {
			t.Errorf("%s: got kind %v path %q index %d (%s), want %v %q %d", c.name, pe.Kind, pe.Path, idx, pe.Message, c.kind, c.path, c.index)
		}
	}
}

func TestPrepareBuildsStoredEvents(t *testing.T) {
	sp, rules := loadSpec(t)
	body := `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":"A0000000-0000-4000-A000-000000000001"},"target":{"type":"order","id":"abc123xyz"},"timestamp":42,"previous_length":3}}`
	p, err := Prepare(sp, rules, Input{AggregateType: "user", ID: "A0000000-0000-4000-A000-000000000002", EventType: "was_created", Body: []byte(body), Now: time.Unix(100, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Stream.ID != "a0000000-0000-4000-a000-000000000002" {
		t.Errorf("key %q, want the lowercase UUID", p.Stream.ID)
	}
	want := `{"actor":{"id":"a0000000-0000-4000-a000-000000000001","type":"user"},"target":{"id":"ABC123XYZ","type":"order"},"timestamp":42}`
	if got := string(p.Events[0].Metadata); got != want || p.Events[0].Timestamp != 42 {
		t.Errorf("metadata %s ts %d, want %s ts 42", got, p.Events[0].Timestamp, want)
	}
	if p.Expect != storage.Exactly || p.Length != 3 {
		t.Errorf("expect %v %d, want exactly 3", p.Expect, p.Length)
	}
	b, err := Prepare(sp, rules, Input{AggregateType: "user", ID: "global", Body: []byte(`{"events":[{"type":"was_seen"}],"metadata":{"actor":{"type":"user","id":"all"},"skip_occ":true}}`), Now: time.Unix(100, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Batch || b.Expect != storage.Skip || string(b.Events[0].Data) != "{}" || b.Events[0].Timestamp != 100 {
		t.Errorf("batch plan %+v, want a skip_occ batch of one event with data {} at 100", b)
	}
}

func openStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "s"), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func plan(t *testing.T, meta string) *Plan {
	t.Helper()
	sp, rules := loadSpec(t)
	p, err := Prepare(sp, rules, Input{AggregateType: "user", ID: "global", EventType: "was_seen", Body: []byte(`{"data":{},"metadata":` + meta + `}`), Now: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSchemaOfEveryObjectAcceptsWhatItWouldCheck: checkData takes the data of an event whose
// schema accepts every object without running the schema, since the body was found valid JSON
// already; the outcome must be the schema's own, on data at the edges of JSON.
func TestSchemaOfEveryObjectAcceptsWhatItWouldCheck(t *testing.T) {
	sp, rules := loadSpec(t)
	user, _ := sp.Aggregate("user")
	ev := user.Events["was_seen"]
	if !ev.Schema.AcceptsEveryObject() {
		t.Fatal("was_seen's schema should accept every object")
	}
	uid := "a0000000-0000-4000-a000-000000000002"
	for _, data := range []string{
		`{}`, `{"a":1}`, `{"a":"\ud800"}`, `{"a":"\u0000"}`, `{"a":1,"a":2}`,
		`{"n":1e400}`, `{"n":-0.0}`, `{"deep":[[[{"x":[null,true,false]}]]]}`, `{"é":"ü"}`,
		`[]`, `"text"`, `12`, `null`,
	} {
		body := `{"data":` + data + `,` + actor + `}`
		_, err := Prepare(sp, rules, Input{AggregateType: "user", ID: uid, EventType: "was_seen", Body: []byte(body), Now: time.Unix(100, 0)})
		schemaErr := ev.Schema.ValidateJSON([]byte(data))
		if (err == nil) != (schemaErr == nil) {
			t.Errorf("data %s: Prepare says %v, the schema %v", data, err, schemaErr)
		}
	}
}

func TestCommitConflicts(t *testing.T) {
	st := openStore(t)
	if _, err := Commit(st, plan(t, `{"actor":{"type":"user","id":"all"}}`), Options{}); err != nil {
		t.Fatal(err)
	}
	_, err := Commit(st, plan(t, `{"actor":{"type":"user","id":"all"},"previous_length":0}`), Options{})
	var pe *problem.Error
	if !errors.As(err, &pe) || !errors.Is(err, problem.ErrConflict) || pe.Message != "Concurrent write detected. Stream has 1 events, expected 0." {
		t.Fatalf("stale previous_length: got %v, want the documented 409", err)
	}
	res, err := Commit(st, plan(t, `{"actor":{"type":"user","id":"all"},"previous_length":1}`), Options{})
	if err != nil || res.From != 2 {
		t.Fatalf("matching previous_length: %+v %v, want the event at 2", res, err)
	}
}

// TestInternalOCCUnderContention: concurrent writers whose record depends on the length they
// read (here through a put) succeed or get 409s after their one retry, and the stream holds
// exactly the successes; writers whose record depends on nothing never conflict.
func TestInternalOCCUnderContention(t *testing.T) {
	for _, dependent := range []bool{true, false} {
		t.Run(fmt.Sprintf("dependent=%v", dependent), func(t *testing.T) { internalOCC(t, dependent) })
	}
}

func internalOCC(t *testing.T, dependent bool) {
	st := openStore(t)
	var opts Options
	if dependent {
		opts.Puts = func(uint64, int) []storage.Put { return nil }
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Commit(st, plan(t, `{"actor":{"type":"user","id":"all"}}`), opts)
			if err != nil && (!dependent || !errors.Is(err, problem.ErrConflict)) {
				t.Error(err)
			}
			mu.Lock()
			if err == nil {
				ok++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	n, _ := st.Length(storage.StreamKey{Type: "user", ID: "global"})
	if int(n) != ok {
		t.Fatalf("length %d, want the %d successes", n, ok)
	}
}

func TestSkipOCCWithPutsLearnsItsPosition(t *testing.T) {
	st := openStore(t)
	for i := 0; i < 3; i++ {
		var after uint64
		res, err := Commit(st, plan(t, `{"actor":{"type":"user","id":"all"},"skip_occ":true}`), Options{Puts: func(a uint64, _ int) []storage.Put {
			after = a
			return []storage.Put{{Space: "s", Key: fmt.Sprint(i), Value: []byte("v")}}
		}})
		if err != nil || res.From != uint64(i+1) || after != uint64(i) {
			t.Fatalf("write %d: from %d after %d err %v", i, res.From, after, err)
		}
	}
}

func TestImplicationsNeedAnExpander(t *testing.T) {
	st := openStore(t)
	sp, rules := loadSpec(t)
	p, err := Prepare(sp, rules, Input{AggregateType: "user", ID: "global", EventType: "was_linked", Body: []byte(`{"data":{},` + actor + `}`), Now: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(st, p, Options{}); !errors.Is(err, problem.ErrInvalid) {
		t.Fatalf("trigger without an expander: %v, want a refusal", err)
	}
	res, err := Commit(st, p, Options{Expand: func(p *Plan, rec *storage.Record) (int, error) {
		rec.Appends = append(rec.Appends, storage.Append{Stream: storage.StreamKey{Type: "user", ID: "all"}, Expect: storage.Expect{Kind: storage.Skip},
			Events: []storage.NewEvent{{Type: "was_seen", Data: []byte(`{}`), Metadata: p.Events[0].Metadata}}})
		return 1, nil
	}})
	if err != nil || res.Implied != 1 || len(res.StreamIDs) != 1 {
		t.Fatalf("with an expander: %+v %v", res, err)
	}
	if n, _ := st.Length(storage.StreamKey{Type: "user", ID: "all"}); n != 1 {
		t.Fatalf("implied stream length %d, want 1 (same record)", n)
	}
}

// TestStatelessExpansionSkipsTheLength: an expansion that reads the trigger stream's state
// gets the length the record will be checked against; one that reads nothing gets a record
// that appends at the end, whatever the length.
func TestStatelessExpansionSkipsTheLength(t *testing.T) {
	st := openStore(t)
	sp, rules := loadSpec(t)
	for _, stateless := range []bool{false, true} {
		p, err := Prepare(sp, rules, Input{AggregateType: "user", ID: "global", EventType: "was_linked", Body: []byte(`{"data":{},` + actor + `}`), Now: time.Unix(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		var seen storage.Expect
		_, err = Commit(st, p, Options{Stateless: stateless, Expand: func(p *Plan, rec *storage.Record) (int, error) {
			seen = rec.Appends[0].Expect
			return 0, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		want := storage.Expect{Kind: storage.Any, Length: 0}
		if stateless {
			want = storage.Expect{Kind: storage.Skip}
		}
		if seen != want {
			t.Errorf("stateless=%v: the expansion saw %+v, want %+v", stateless, seen, want)
		}
	}
}

func TestAppendAnswer(t *testing.T) {
	ids := []storage.StreamID{{Ms: 5, Seq: 0}, {Ms: 5, Seq: 1}}
	cases := []struct {
		batch   bool
		ids     []storage.StreamID
		implied int
		want    string
	}{
		{false, ids[:1], 0, `{"ok":true,"stream_id":"5-0"}`},
		{false, ids[:1], 2, `{"ok":true,"stream_id":"5-0","implied_count":2}`},
		{true, ids, 0, `{"ok":true,"stream_ids":["5-0","5-1"],"count":2}`},
	}
	for _, c := range cases {
		if got := string(AppendAnswer(nil, c.batch, c.ids, c.implied)); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}
