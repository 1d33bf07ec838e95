package api

import (
	"sort"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine"
)

const auditUser = "a0000000-0000-4000-a000-0000000000aa"

func keysOf(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// TestAuditRoutes checks the answer shapes of CONTRACT.md on the data plane and under ops.
func TestAuditRoutes(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	for i := 0; i < 5; i++ {
		res := ds.post("/user/"+auditUser+"/was_created", map[string]any{"data": map[string]any{"name": "n"}, "metadata": map[string]any{"actor": map[string]any{"type": "user", "id": auditUser}}})
		expect(t, "write", res, 201)
	}
	ops := "/api/instances/myapp/ops/staging"
	for _, c := range []struct {
		name, data, ops, keys string
	}{
		{"verify-chain", "/user/" + auditUser + "/audit/verify-chain", ops + "/audit/verify-chain/user/" + auditUser, "length,ok,valid"},
		{"merkle-root", "/user/" + auditUser + "/audit/merkle-root", ops + "/audit/merkle-root/user/" + auditUser, "length,ok,root"},
		{"merkle-proof", "/user/" + auditUser + "/audit/merkle-proof/3", ops + "/audit/merkle-proof/user/" + auditUser + "/3", "index,leaf,ok,path,root,tree_size"},
	} {
		a := ds.get(c.data)
		expect(t, c.name+" (data plane)", a, 200)
		b := ds.do("GET", c.ops, ds.token, nil)
		expect(t, c.name+" (ops)", b, 200)
		if got := keysOf(a.body); got != c.keys || string(a.raw) != string(b.raw) {
			t.Errorf("%s: got fields %s and %s / %s, want %s the same on both routes", c.name, got, a.raw, b.raw, c.keys)
		}
	}
	proof := ds.get("/user/" + auditUser + "/audit/merkle-proof/3").body
	res := ds.post("/user/"+auditUser+"/audit/merkle-verify", proof)
	expect(t, "merkle-verify", res, 200)
	if res.body["valid"] != true || keysOf(res.body) != "ok,valid" {
		t.Errorf("merkle-verify of a good proof: got %s", res.raw)
	}
	proof["leaf"] = strings.Repeat("0", 64)
	res = ds.do("POST", ops+"/audit/merkle-verify", ds.token, proof)
	expect(t, "merkle-verify (ops)", res, 200)
	if res.body["valid"] != false || res.body["reason"] == nil {
		t.Errorf("merkle-verify of a changed leaf: got %s, want valid false with a reason", res.raw)
	}
	expect(t, "proof index out of range", ds.get("/user/"+auditUser+"/audit/merkle-proof/5"), 422)
	expect(t, "proof index not a number", ds.get("/user/"+auditUser+"/audit/merkle-proof/x"), 400)
	expect(t, "verify-chain of no events", ds.get("/user/b0000000-0000-4000-a000-0000000000bb/audit/verify-chain"), 404)
}

// TestRootAnchorRoutes creates, lists, verifies and deletes anchors, and sets auto-anchoring.
func TestRootAnchorRoutes(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	expect(t, "write", ds.post("/user/"+auditUser+"/was_created", map[string]any{"data": map[string]any{"name": "n"}, "metadata": map[string]any{"actor": map[string]any{"type": "user", "id": auditUser}}}), 201)
	ops := "/api/instances/myapp/ops/staging"
	expect(t, "latest before any", ds.do("GET", ops+"/root-anchors/latest", ds.token, nil), 404)
	created := ds.do("POST", ops+"/root-anchors", ds.token, nil)
	expect(t, "create anchor", created, 201)
	id, _ := created.body["id"].(string)
	if created.body["stream_count"] != float64(1) || created.body["root"] == nil {
		t.Fatalf("create anchor: got %s", created.raw)
	}
	latest := ds.do("GET", ops+"/root-anchors/latest", ds.token, nil)
	expect(t, "latest", latest, 200)
	if latest.body["id"] != id {
		t.Errorf("latest: got %s, want anchor %s", latest.raw, id)
	}
	list := ds.do("GET", ops+"/root-anchors", ds.token, nil)
	expect(t, "list", list, 200)
	if data, _ := list.body["data"].([]any); len(data) != 1 {
		t.Errorf("list: got %s, want one anchor", list.raw)
	}
	v := ds.do("POST", ops+"/root-anchors/"+id+"/verify", ds.token, nil)
	expect(t, "verify anchor", v, 200)
	if v.body["valid"] != true {
		t.Errorf("verify anchor: got %s", v.raw)
	}
	s := ds.do("PUT", ops+"/root-anchor-settings", ds.token, map[string]any{"enabled": true, "interval_seconds": 3600})
	expect(t, "put settings", s, 200)
	s = ds.do("GET", ops+"/root-anchor-settings", ds.token, nil)
	expect(t, "get settings", s, 200)
	if s.body["enabled"] != true || s.body["interval_seconds"] != float64(3600) {
		t.Errorf("settings: got %s", s.raw)
	}
	expect(t, "interval too short", ds.do("PUT", ops+"/root-anchor-settings", ds.token, map[string]any{"interval_seconds": 1}), 422)
	expect(t, "delete", ds.do("DELETE", ops+"/root-anchors/"+id, ds.token, nil), 200)
	expect(t, "delete again", ds.do("DELETE", ops+"/root-anchors/"+id, ds.token, nil), 404)
}
