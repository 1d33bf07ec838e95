package api

import (
	"strings"
	"testing"

	"github.com/j17-go/j17/engine"
)

// TestRestartKeepsEverything: close the server and the engine, reopen them on the same data
// directory, and every read answers as before; idempotency keys survive too.
func TestRestartKeepsEverything(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{SnapshotEvery: 2})
	for i := 0; i < 5; i++ {
		expect(t, "write", ds.post("/counter/global/was_incremented", `{"data":{},"metadata":{"actor":{"type":"user","id":"`+userA+`"}}}`), 201)
	}
	first := ds.post("/user/"+userA+"/was_created", `{"data":{"name":"Ann"},"metadata":{"actor":{"type":"user","id":"`+userA+`"}}}`, "X-Idempotency-Key", "restart")
	expect(t, "keyed write", first, 201)
	paths := []string{"/counter/global", "/counter/global/length", "/counter/global/events", "/user/" + userA, "/user", "/user?resolve", "/counter/global?at=99999999999"}
	before := map[string]string{}
	for _, p := range paths {
		res := ds.get(p)
		expect(t, p, res, 200)
		before[p] = string(res.raw)
	}
	ds.stop()

	ds2 := startDataServer(t, ds.dir, engine.Options{SnapshotEvery: 2})
	ds2.key = ds.key
	for _, p := range paths {
		if got := string(ds2.get(p).raw); got != before[p] {
			t.Errorf("%s after restart: got %s, want %s", p, got, before[p])
		}
	}
	again := ds2.post("/user/"+userA+"/was_created", `{"data":{"name":"Ann"},"metadata":{"actor":{"type":"user","id":"`+userA+`"}}}`, "X-Idempotency-Key", "restart")
	if string(again.raw) != string(first.raw) || again.header.Get("X-Idempotency-Replayed") != "true" {
		t.Errorf("keyed write after restart: %d %s, want the replay of %s", again.status, again.raw, first.raw)
	}
}

// TestSpecDeploySwapsHandlers: a deploy that changes a handler changes the next read, even of a
// cached and snapshotted aggregate.
func TestSpecDeploySwapsHandlers(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true, SnapshotEvery: 1})
	for i := 0; i < 3; i++ {
		expect(t, "write", ds.post("/counter/global/was_incremented", `{"data":{},"metadata":{"actor":{"type":"user","id":"`+userA+`"}}}`), 201)
	}
	if got := field(ds.get("/counter/global").body, "data.count"); got != 3.0 {
		t.Fatalf("count = %v, want 3", got)
	}
	spec := strings.Replace(string(readSpec(t)), `{"increment": {"target": "count"}}`, `{"increment": {"target": "count", "by": 10}}`, 1)
	ds.deploy([]byte(spec), false)
	if got := field(ds.get("/counter/global").body, "data.count"); got != 30.0 {
		t.Fatalf("count after the deploy = %v, want 30 (the new handler)", got)
	}
}

func TestCheckpoints(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	for _, id := range []string{userA, userB} {
		expect(t, "write", ds.post("/user/"+id+"/was_created", `{"data":{"name":"N"},"metadata":{"actor":{"type":"user","id":"`+userA+`"}}}`), 201)
	}
	ops := "/api/instances/myapp/ops/staging/checkpoints"
	one := ds.do("POST", ops, ds.token, map[string]any{"aggregate_type": "user", "aggregate_id": userA})
	expect(t, "create", one, 201)
	if one.body["count"] != 1.0 || one.body["aggregate_id"] != userA {
		t.Errorf("create answer %s", one.raw)
	}
	root := ds.do("POST", ops, ds.token, map[string]any{"aggregate_type": "user"})
	expect(t, "create root", root, 201)
	if root.body["count"] != 2.0 || root.body["root"] != true {
		t.Errorf("root checkpoint answer %s, want count 2 and root true", root.raw)
	}
	expect(t, "unknown type", ds.do("POST", ops, ds.token, map[string]any{"aggregate_type": "nope"}), 404)
	expect(t, "never written", ds.do("POST", ops, ds.token, map[string]any{"aggregate_type": "user", "aggregate_id": "b0000000-0000-4000-a000-000000000009"}), 404)

	list := ds.do("GET", ops, ds.token, nil)
	expect(t, "list", list, 200)
	if items, _ := list.body["data"].([]any); len(items) != 2 {
		t.Fatalf("list %s, want two checkpoints", list.raw)
	}
	events := ds.get("/user/" + userA + "/events").raw
	id := root.body["checkpoint_id"].(string)
	res := ds.do("POST", ops+"/"+id+"/restore", ds.token, nil)
	expect(t, "restore", res, 200)
	if res.body["restored"] != 2.0 {
		t.Errorf("restore answer %s, want 2 restored", res.raw)
	}
	expect(t, "delete", ds.do("DELETE", ops+"/"+id, ds.token, nil), 200)
	expect(t, "delete again", ds.do("DELETE", ops+"/"+id, ds.token, nil), 404)
	expect(t, "restore deleted", ds.do("POST", ops+"/"+id+"/restore", ds.token, nil), 404)
	if after := ds.get("/user/" + userA + "/events").raw; string(after) != string(events) {
		t.Errorf("checkpoint operations changed the events:\n%s\nwant\n%s", after, events)
	}
	if got := field(ds.get("/user/"+userA).body, "data.name"); got != "N" {
		t.Errorf("read after restore: name %v", got)
	}
}
