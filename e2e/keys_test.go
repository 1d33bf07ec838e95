package e2e

import "testing"

// TestKeyLifecycle follows a key through rotation and revocation on the data plane
// (Authentication § Rotating keys; Error responses: 401 for a key that is not valid or revoked).
func TestKeyLifecycle(t *testing.T) {
	f := sharedFixture(t)
	base := f.srv.url()
	k := f.controlCall(t, "POST", "/api/instances/"+f.instance+"/keys",
		map[string]any{"name": "lifecycle", "scope": "write", "environment": "test"}, 201)
	oldKey, id := k["key"].(string), k["id"].(string)
	path := "/order/" + newUUID(4)
	send(t, base, dataCall(oldKey, "POST", path+"/was_placed", actorBody(map[string]any{}, nil)), 201, "write with a new key")

	rotated := f.controlCall(t, "POST", "/api/keys/"+id+"/rotate", nil, 201)
	newKey, newID := rotated["key"].(string), rotated["id"].(string)
	r := send(t, base, dataCall(oldKey, "GET", path, nil), 401, "read with the rotated-out key")
	if r.obj()["code"] != "unauthorized" {
		t.Errorf("rotated-out key: %s, want code unauthorized", r)
	}
	send(t, base, dataCall(newKey, "GET", path, nil), 200, "read with the rotated key")

	f.controlCall(t, "DELETE", "/api/keys/"+newID, nil, 200)
	r = send(t, base, dataCall(newKey, "POST", path+"/was_paid", actorBody(map[string]any{}, nil)), 401, "write with a revoked key")
	if r.obj()["code"] != "unauthorized" {
		t.Errorf("revoked key: %s, want code unauthorized", r)
	}
	lr := send(t, base, dataCall(f.keys["test"]["read"], "GET", path+"/length", nil), 200, "length")
	if lr.obj()["length"] != float64(1) {
		t.Errorf("length after a revoked key's write: %v, want 1", lr.obj()["length"])
	}
}
