package api

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const chainID = "a0000000-0000-4000-a000-0000000000c1"

// TestSagaChainDepthLimit: a saga's event may start a saga, down to depth 3; the fourth link is
// skipped and saga_depth_exceeded is recorded.
func TestSagaChainDepthLimit(t *testing.T) {
	ds := startSagaServer(t)
	ds.deploy(sagaSpec(t, "spec_chain.json"), true)
	ds.runSagaOp(t, "write", sagaOp{Write: "/chain/" + chainID + "/e0", Data: []byte(`{}`)})
	ds.runSagaOp(t, "chain", sagaOp{Events: "/chain/" + chainID, Types: []string{"e0", "e1", "e2", "e3"}})
	deadline := time.Now().Add(sagaWait)
	for {
		res := ds.admin("GET", "/_admin/sagas?status=completed")
		expect(t, "list", res, 200)
		if res.body["total"] == float64(3) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %v completed sagas, want 3: %s", res.body["total"], res.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
	depths := map[string]float64{}
	for _, s := range ds.admin("GET", "/_admin/sagas").body["data"].([]any) {
		m := s.(map[string]any)
		depths[m["type"].(string)] = m["depth"].(float64)
	}
	if fmt.Sprint(depths) != "map[s1:1 s2:2 s3:3]" {
		t.Fatalf("got saga depths %v, want s1:1 s2:2 s3:3 and no s4", depths)
	}
	// The runner is idle once s3 completed; a later event shows nothing more was emitted.
	ds.runSagaOp(t, "chain again", sagaOp{Events: "/chain/" + chainID, Types: []string{"e0", "e1", "e2", "e3"}})
	if !strings.Contains(ds.logs.String(), "saga_depth_exceeded") {
		t.Fatal("no saga_depth_exceeded entry in the log")
	}
	// e2 (written by s2, depth 2) schedules its e4; e3 (written by s3, the deepest link) schedules
	// nothing: past the chain limit schedule hooks are skipped too.
	res := ds.admin("GET", "/_admin/scheduled?status=pending")
	expect(t, "pending schedules", res, 200)
	var from []string
	for _, s := range res.body["data"].([]any) {
		from = append(from, fmt.Sprint(s.(map[string]any)["data"]))
	}
	if fmt.Sprint(from) != "[map[from:e2]]" {
		t.Fatalf("got pending schedules with data %v, want only the one from e2", from)
	}
	if !strings.Contains(ds.logs.String(), "saga_depth_exceeded: schedule hooks skipped") {
		t.Fatal("no saga_depth_exceeded entry for the skipped schedule")
	}
}

// TestSagaAdminRoutes covers the operator API around the examples: who may call it, the ops
// route, filters and paging, unknown ids, and the running-saga limit.
func TestSagaAdminRoutes(t *testing.T) {
	ds := startSagaServer(t)
	ds.deploy(sagaSpec(t, "spec_chain.json"), true)
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("a0000000-0000-4000-a000-%012d", i)
		expect(t, "start waiter", ds.post("/chain/"+id+"/waits", map[string]any{"data": map[string]any{}, "metadata": actor()}), 201)
	}
	res := ds.post("/chain/"+chainID+"/waits", map[string]any{"data": map[string]any{}, "metadata": actor()})
	expect(t, "101st saga", res, 422)
	if !strings.Contains(res.body["error"].(string), "100 sagas are already running") {
		t.Errorf("101st saga: got error %q", res.body["error"])
	}
	expect(t, "the refused trigger was not written", ds.get("/chain/"+chainID), 404)

	res = ds.admin("GET", "/_admin/sagas?status=running&limit=10&offset=95")
	expect(t, "page", res, 200)
	if n := len(res.body["data"].([]any)); n != 5 || res.body["total"] != float64(100) {
		t.Fatalf("page: got %d sagas of total %v, want 5 of 100", n, res.body["total"])
	}
	first := res.body["data"].([]any)[0].(map[string]any)
	id := first["saga_id"].(string)
	if first["current_step"] != "wait" || first["steps"].([]any)[0].(map[string]any)["status"] != "waiting" {
		t.Fatalf("got %v, want a saga waiting at step wait", first)
	}

	expect(t, "API key", ds.do("GET", "/_admin/sagas", ds.key, nil), 403)
	expect(t, "no instance headers", ds.do("GET", "/_admin/sagas", ds.token, nil), 400)
	expect(t, "bad status", ds.admin("GET", "/_admin/sagas?status=sleeping"), 400)
	expect(t, "unknown saga", ds.admin("GET", "/_admin/sagas/saga_nope"), 404)
	expect(t, "retry of a running saga", ds.admin("POST", "/_admin/sagas/"+id+"/retry"), 409)

	ops := "/api/instances/myapp/ops/staging/sagas"
	res = ds.do("GET", ops+"/"+id, ds.token, nil)
	expect(t, "ops get", res, 200)
	if res.body["saga_id"] != id || res.body["type"] != "waiter" || res.body["status"] != "running" {
		t.Fatalf("ops get: got %s", res.raw)
	}
	res = ds.do("GET", ops+"?status=completed", ds.token, nil)
	expect(t, "ops list", res, 200)
	if res.body["total"] != float64(0) {
		t.Fatalf("ops list: got %s, want no completed saga", res.raw)
	}
	expect(t, "ops retry of a running saga", ds.do("POST", ops+"/"+id+"/retry", ds.token, nil), 409)
	expect(t, "ops retry of an unknown saga", ds.do("POST", ops+"/saga_nope/retry", ds.token, nil), 404)
}
