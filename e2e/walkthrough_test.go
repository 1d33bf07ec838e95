package e2e

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// TestGettingStarted follows the Getting Started page as written, against its own instance in
// prod: deploy the page's spec, post the page's event, query the aggregate. Only the host and
// the key are adapted.
func TestGettingStarted(t *testing.T) {
	f := sharedFixture(t)
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/getting-started/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var spec, want any
	if err := json.Unmarshal(read("spec.json"), &spec); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(read("response.json"), &want); err != nil {
		t.Fatal(err)
	}
	inst := f.controlCall(t, "POST", "/api/instances", map[string]any{"name": "gettingstarted"}, 201)
	g := &fixture{srv: f.srv, token: f.token, instance: inst["id"].(string)}
	g.deploy(t, "prod", spec)
	k := g.controlCall(t, "POST", "/api/instances/"+g.instance+"/keys",
		map[string]any{"name": "Production Backend", "scope": "write", "environment": "prod"}, 201)
	key, _ := k["key"].(string)

	v := newVars()
	start := time.Now().Unix()
	post := call{Method: "POST", Path: "/user/550e8400-e29b-41d4-a716-446655440000/was_created",
		Header: map[string][]string{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}},
		Body:   read("post.json")}
	r := do(f.srv.url(), post)
	v.window = [2]int64{start - 2, time.Now().Unix() + 2}
	if p := checkReply(v, caseExpect{Status: 201, Body: map[string]any{"stream_id": "$stream_id"}}, r); len(p) > 0 {
		t.Fatalf("step 2, post an event\n  request: %s\n  got: %s\n  mismatches: %v", post, r, p)
	}

	get := call{Method: "GET", Path: "/user/550e8400-e29b-41d4-a716-446655440000",
		Header: map[string][]string{"Authorization": {"Bearer " + key}}}
	r = do(f.srv.url(), get)
	exact := map[string]any{"$exact": want}
	if m, ok := want.(map[string]any); ok {
		m["data"] = map[string]any{"$exact": m["data"]}
	}
	if p := checkReply(v, caseExpect{Status: 200, Body: exact}, r); len(p) > 0 {
		t.Fatalf("step 3, query the aggregate\n  request: %s\n  got: %s\n  mismatches: %v", get, r, p)
	}
	data, _ := lookup(r.JSON, "data.created_at")
	meta, _ := lookup(r.JSON, "metadata.created_at")
	if data != meta {
		t.Errorf("data.created_at %v (set from $.metadata.timestamp) differs from metadata.created_at %v", data, meta)
	}
}
