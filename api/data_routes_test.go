package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine"
)

// field walks a decoded body by a dotted path ("metadata.length", "stream_ids.0").
func field(body map[string]any, path string) any {
	var cur any = body
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

func TestDataRoutes(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	u := "/user/" + userB
	meta := `"metadata":{"actor":{"type":"user","id":"` + userA + `"}}`
	cases := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		status  int
		want    map[string]any // dotted path -> value (JSON numbers as float64)
	}{
		{"write", "POST", u + "/was_created", `{"data":{"name":"Alice"},` + meta + `}`, nil, 201, map[string]any{"ok": true}},
		{"read", "GET", u, "", nil, 200, map[string]any{"data.name": "Alice", "metadata.length": 1.0}},
		{"uppercase uuid is the same aggregate", "GET", strings.ToUpper(u[:6]) + strings.ToUpper(u[6:]), "", nil, 404, nil},
		{"uppercase uuid key", "GET", "/user/" + strings.ToUpper(userB), "", nil, 200, map[string]any{"metadata.length": 1.0}},
		{"length", "GET", u + "/length", "", nil, 200, map[string]any{"length": 1.0}},
		{"length of a never written aggregate", "GET", "/user/" + userA + "/length", "", nil, 200, map[string]any{"length": 0.0}},
		{"never written", "GET", "/user/" + userA, "", nil, 404, map[string]any{"code": "not_found", "error": "Aggregate not found"}},
		{"unknown aggregate type read", "GET", "/nope/" + userA, "", nil, 404, map[string]any{"code": "not_found"}},
		{"malformed id read", "GET", "/user/not-an-id", "", nil, 422, map[string]any{"path": "key"}},
		{"singleton before its first write", "GET", "/user/global", "", nil, 200, map[string]any{"metadata.length": 0.0}},
		{"declared singleton", "GET", "/counter/all", "", nil, 200, map[string]any{"metadata.length": 0.0}},
		{"not JSON", "POST", u + "/had_name_updated", `{"data":`, nil, 400, map[string]any{"code": "bad_request"}},
		{"not an object", "POST", u + "/had_name_updated", `[1]`, nil, 400, nil},
		{"wrong content type", "POST", u + "/had_name_updated", `{"data":{"name":"B"},` + meta + `}`, []string{"Content-Type", "text/plain"}, 400, nil},
		{"data missing", "POST", u + "/had_name_updated", `{` + meta + `}`, nil, 400, map[string]any{"path": "data"}},
		{"actor missing", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{}}`, nil, 400, map[string]any{"path": "metadata.actor"}},
		{"unknown aggregate type", "POST", "/nope/" + userB + "/was_created", `{"data":{},` + meta + `}`, nil, 404, nil},
		{"unknown event type", "POST", u + "/was_placed", `{"data":{},` + meta + `}`, nil, 404,
			map[string]any{"error": "Event type 'was_placed' not found in spec for aggregate 'user'"}},
		{"reserved event type", "POST", u + "/_was_tombstoned", `{"data":{},` + meta + `}`, nil, 404, nil},
		{"schema failure", "POST", u + "/had_name_updated", `{"data":{"name":5},` + meta + `}`, nil, 422,
			map[string]any{"error": "Event data failed schema validation", "path": "data.name", "details.constraint": "type"}},
		{"malformed key", "POST", "/user/12345/was_created", `{"data":{"name":"A"},` + meta + `}`, nil, 422, map[string]any{"path": "key"}},
		{"malformed actor id", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"user","id":"x"}}}`, nil, 422,
			map[string]any{"path": "metadata.actor.id"}},
		{"unknown actor type", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"robot","id":"` + userA + `"}}}`, nil, 422, nil},
		{"system agent outside the allowlist", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"system_agent","id":"` + userA + `"}}}`, nil, 422,
			map[string]any{"path": "metadata.actor.id"}},
		{"system agent", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"system_agent","id":"test_data_importer"}}}`, nil, 201, nil},
		{"singleton actor", "POST", u + "/had_name_updated", `{"data":{"name":"C"},"metadata":{"actor":{"type":"user","id":"all"}}}`, nil, 201, nil},
		{"unknown target type", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"target":{"type":"ship","id":"` + userA + `"}}}`, nil, 422,
			map[string]any{"path": "metadata.target.type"}},
		{"malformed target id", "POST", u + "/had_name_updated", `{"data":{"name":"B"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"target":{"type":"order","id":"nope"}}}`, nil, 422,
			map[string]any{"path": "metadata.target.id"}},
		{"previous_length conflict", "POST", u + "/had_name_updated", `{"data":{"name":"D"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"previous_length":1}}`, nil, 409,
			map[string]any{"code": "conflict", "details.expected": 1.0, "details.actual": 3.0, "error": "Concurrent write detected. Stream has 3 events, expected 1."}},
		{"previous_length match", "POST", u + "/had_name_updated", `{"data":{"name":"D"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"previous_length":3}}`, nil, 201, nil},
		{"skip_occ not allowed", "POST", u + "/had_name_updated", `{"data":{"name":"E"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"skip_occ":true}}`, nil, 422,
			map[string]any{"path": "metadata.skip_occ"}},
		{"skip_occ allowed", "POST", "/counter/global/was_incremented", `{"data":{},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"skip_occ":true}}`, nil, 201, nil},
		{"timestamp override", "POST", "/counter/global/was_noted", `{"data":{"note":"old"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"timestamp":1000}}`, nil, 201, nil},
		{"timestamp float", "POST", "/counter/global/was_noted", `{"data":{"note":"x"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"timestamp":1.5}}`, nil, 422,
			map[string]any{"error": "metadata.timestamp must be a non-negative integer (Unix seconds)"}},
		{"timestamp negative", "POST", "/counter/global/was_noted", `{"data":{"note":"x"},"metadata":{"actor":{"type":"user","id":"` + userA + `"},"timestamp":-1}}`, nil, 422, nil},
		{"read at a time", "GET", "/counter/global?at=1000", "", nil, 200, map[string]any{"metadata.length": 1.0, "data.notes.0": "old"}},
		{"read at a time before every event", "GET", "/counter/global?at=10", "", nil, 200, map[string]any{"metadata.length": 0.0}},
		{"read now", "GET", "/counter/global", "", nil, 200, map[string]any{"metadata.length": 2.0, "data.count": 1.0}},
		{"synchronous read", "GET", "/counter/global?synchronous=true", "", nil, 200, map[string]any{"metadata.length": 2.0}},
		{"batch", "POST", "/user/" + userA, `{"events":[{"type":"was_created","data":{"name":"Z"}},{"type":"had_name_updated","data":{"name":"Y"}}],` + meta + `}`, nil, 201,
			map[string]any{"count": 2.0}},
		{"batch result", "GET", "/user/" + userA, "", nil, 200, map[string]any{"data.name": "Y", "metadata.length": 2.0}},
		{"batch schema failure", "POST", "/user/" + userA, `{"events":[{"type":"had_name_updated","data":{"name":"ok"}},{"type":"had_name_updated","data":{}}],` + meta + `}`, nil, 422,
			map[string]any{"event_index": 1.0, "path": "data"}},
		{"batch unknown event", "POST", "/user/" + userA, `{"events":[{"type":"nope","data":{}}],` + meta + `}`, nil, 404, map[string]any{"event_index": 0.0}},
		{"batch empty", "POST", "/user/" + userA, `{"events":[],` + meta + `}`, nil, 400, map[string]any{"error": "Events array cannot be empty"}},
		{"batch missing", "POST", "/user/" + userA, `{` + meta + `}`, nil, 400, map[string]any{"error": "Missing 'events' array in request body"}},
		{"batch wrote nothing", "GET", "/user/" + userA + "/length", "", nil, 200, map[string]any{"length": 2.0}},
		{"events", "GET", u + "/events?count=2", "", nil, 200, map[string]any{"events.0.type": "was_created", "events.1.metadata.actor.id": "test_data_importer"}},
		{"events bad start", "GET", u + "/events?start=x", "", nil, 400, nil},
		{"events of a never written aggregate", "GET", "/user/b0000000-0000-4000-a000-000000000009/events", "", nil, 404, nil},
		{"list", "GET", "/user?limit=1", "", nil, 200, map[string]any{"data.0": userA, "cursor": userA}},
		{"list last page omits the cursor", "GET", "/user?limit=1&cursor=" + userA, "", nil, 200, map[string]any{"data.0": userB, "cursor": nil}},
		{"list after the end", "GET", "/user?cursor=" + userB, "", nil, 200, map[string]any{"data.0": nil, "cursor": nil}},
		{"list resolved", "GET", "/user?resolve", "", nil, 200, map[string]any{"data.0.id": userA, "data.0.data.name": "Y", "data.1.metadata.length": 4.0}},
		{"list bad limit", "GET", "/user?limit=0", "", nil, 400, nil},
	}
	for _, c := range cases {
		var body any
		if c.body != "" {
			body = c.body
		}
		res := ds.do(c.method, c.path, ds.key, body, c.headers...)
		if res.status != c.status {
			t.Errorf("%s: %s %s: got status %d, want %d; body %s", c.name, c.method, c.path, res.status, c.status, res.raw)
			continue
		}
		for path, want := range c.want {
			if got := field(res.body, path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %s = %v, want %v; body %s", c.name, path, got, want, res.raw)
			}
		}
	}
}

func TestImpliedCountIsOmittedAndStreamIDsIncrease(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	res := ds.post("/counter/global", map[string]any{"events": []any{
		map[string]any{"type": "was_incremented"}, map[string]any{"type": "was_incremented"},
	}, "metadata": actor()})
	expect(t, "batch", res, 201)
	if _, ok := res.body["implied_count"]; ok {
		t.Errorf("implied_count present with no implications: %s", res.raw)
	}
	ids, _ := res.body["stream_ids"].([]any)
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("stream_ids = %v, want two distinct ids", ids)
	}
}
