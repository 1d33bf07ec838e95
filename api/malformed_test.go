package api

import (
	"strings"
	"testing"
)

// TestMalformedBodies sends broken bodies to every control-plane route that reads one: each must
// get the documented envelope with a 4xx, never a 500.
func TestMalformedBodies(t *testing.T) {
	f := newFixture(t, Options{})
	ts := f.ts
	keyPath := "/api/keys/" + f.ids["prod-write"]
	routes := []struct {
		path  string
		typed map[string]string // a field and a wrongly typed value for it
	}{
		{"/api/login", map[string]string{"email": `{"email": 5, "password": "x"}`, "password": `{"email": "a@b.c", "password": ["x"]}`}},
		{"/api/instances", map[string]string{"name": `{"name": {"a": 1}}`}},
		{"/api/instances/myapp/spec", map[string]string{"environment": `{"environment": 1, "spec": {}}`, "force": `{"environment": "prod", "spec": {}, "force": "yes"}`}},
		{"/api/instances/myapp/keys", map[string]string{"name": `{"name": 1, "scope": "read", "environment": "prod"}`, "scope": `{"name": "n", "scope": true, "environment": "prod"}`, "environment": `{"name": "n", "scope": "read", "environment": []}`}},
		{keyPath + "/schedule_revocation", map[string]string{"revoke_at": `{"revoke_at": 1700000000}`}},
	}
	broken := map[string]string{
		"empty":          ``,
		"not JSON":       `hello`,
		"truncated":      `{"name": "x"`,
		"array":          `[1, 2]`,
		"string":         `"text"`,
		"null":           `null`,
		"trailing data":  `{} {}`,
		"missing fields": `{}`,
	}
	for _, rt := range routes {
		auth := f.tok
		if rt.path == "/api/login" {
			auth = ""
		}
		for name, body := range broken {
			res := ts.do("POST", rt.path, auth, body)
			if res.status != 400 {
				t.Errorf("POST %s with %s body: got %d, want 400; body %s", rt.path, name, res.status, res.raw)
				continue
			}
			expect(t, rt.path+" "+name, res, 400)
			if res.body["code"] != "bad_request" {
				t.Errorf("POST %s with %s body: got code %v, want bad_request", rt.path, name, res.body["code"])
			}
		}
		for field, body := range rt.typed {
			res := ts.do("POST", rt.path, auth, body)
			expect(t, rt.path+" wrong type of "+field, res, 400)
			if res.body["path"] != field || !strings.Contains(res.body["error"].(string), field) {
				t.Errorf("POST %s wrong type of %s: got path %v error %q, want the field named", rt.path, field, res.body["path"], res.body["error"])
			}
		}
	}
	// A spec that is not an object is well-formed JSON but an invalid spec.
	res := ts.do("POST", "/api/instances/myapp/spec", f.tok, `{"environment":"prod","spec":"text"}`)
	expect(t, "spec of the wrong type", res, 422)
}
