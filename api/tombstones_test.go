package api

import (
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
)

// TestTombstoneRoutes walks the lifecycle of the Tombstones page over the ops routes.
func TestTombstoneRoutes(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	write := func(name string) {
		t.Helper()
		expect(t, "write", ds.post("/user/"+auditUser+"/was_created", map[string]any{"data": map[string]any{"name": name}, "metadata": map[string]any{"actor": map[string]any{"type": "user", "id": auditUser}}}), 201)
	}
	write("Alice Secret")
	write("Alice Secret Again")
	ops := "/api/instances/myapp/ops/staging"
	body := map[string]any{"legal_basis": "GDPR Art. 17", "request_id": "req-1", "requested_by": "dpo@example.com", "grace_period_days": 0}
	created := ds.do("POST", ops+"/tombstone/user/"+auditUser, ds.token, body)
	expect(t, "create", created, 201)
	id, _ := created.body["tombstone_id"].(string)
	if created.body["status"] != "pending" || created.body["legal_basis"] != "GDPR Art. 17" || created.body["grace_period_days"] != float64(3) {
		t.Fatalf("create: got %s, want pending with the 72-hour minimum", created.raw)
	}
	other := ds.do("POST", ops+"/tombstone/user/"+auditUser, ds.token, body)
	expect(t, "create second", other, 201)
	otherID, _ := other.body["tombstone_id"].(string)
	expect(t, "cancel", ds.do("DELETE", ops+"/tombstones/"+otherID, ds.token, nil), 200)
	expect(t, "cancel again", ds.do("DELETE", ops+"/tombstones/"+otherID, ds.token, nil), 409)
	expect(t, "execute in grace period", ds.do("POST", ops+"/tombstones/"+id+"/execute", ds.token, nil), 422)
	ds.clock.Advance(72 * time.Hour)
	ds.token = ds.login()
	done := ds.do("POST", ops+"/tombstones/"+id+"/execute", ds.token, nil)
	expect(t, "execute", done, 200)
	if done.body["status"] != "completed" || done.body["executed_at"] == nil || done.body["pre_tombstone_root"] == nil {
		t.Fatalf("execute: got %s", done.raw)
	}
	affected, _ := done.body["affected_streams"].([]any)
	if len(affected) != 1 || affected[0].(map[string]any)["event_count"] != float64(2) {
		t.Errorf("affected_streams: got %v", affected)
	}
	got := ds.do("GET", ops+"/tombstones/"+id, ds.token, nil)
	expect(t, "get", got, 200)
	if got.body["status"] != "completed" {
		t.Errorf("get: got %s", got.raw)
	}
	list := ds.do("GET", ops+"/tombstones", ds.token, nil)
	expect(t, "list", list, 200)
	if data, _ := list.body["data"].([]any); len(data) != 2 {
		t.Errorf("list: got %s, want 2", list.raw)
	}
	events := ds.get("/user/" + auditUser + "/events")
	expect(t, "events", events, 200)
	if strings.Contains(string(events.raw), "Alice Secret") || !strings.Contains(string(events.raw), "_was_tombstoned") {
		t.Errorf("events after tombstone: got %s", events.raw)
	}
	write("Back")
	chain := ds.get("/user/" + auditUser + "/audit/verify-chain")
	expect(t, "verify-chain", chain, 200)
	if chain.body["valid"] != true || chain.body["length"] != float64(3) {
		t.Errorf("verify-chain after tombstone and write: got %s", chain.raw)
	}
	expect(t, "unknown tombstone", ds.do("GET", ops+"/tombstones/nope", ds.token, nil), 404)
	forced := ds.do("POST", ops+"/tombstone/user/"+auditUser, ds.token, nil)
	expect(t, "create without body", forced, 201)
	fid, _ := forced.body["tombstone_id"].(string)
	res := ds.do("POST", ops+"/tombstones/"+fid+"/execute?force=true", ds.token, nil)
	expect(t, "execute with force", res, 200)
	if res.body["forced"] != true {
		t.Errorf("forced execution: got %s", res.raw)
	}
}
