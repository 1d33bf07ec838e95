package api

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// echoPrincipal is a data-plane route registered by the tests: it answers with the principal it
// was given.
func echoPrincipal(r *Request) error {
	p := r.Principal
	WriteJSON(r.Ctx, fasthttp.StatusOK, map[string]any{
		"ok": true, "instance_id": p.InstanceID, "instance": p.InstanceName, "environment": p.Environment,
		"scope": p.Scope, "key_id": p.KeyID, "operator": p.IsOperator(), "id": r.Param("id"),
	})
	return nil
}

func registerEcho(s *Server) {
	s.HandleData("GET", "/:type/:id", echoPrincipal)
	s.HandleData("POST", "/:type/:id/:event", echoPrincipal)
}

// fixture creates instance "myapp" (and "other") with keys and returns them by name.
type fixture struct {
	ts    *testServer
	tok   string
	instA string
	keys  map[string]string // name -> secret
	ids   map[string]string // name -> key id
}

func newFixture(t *testing.T, opts Options) *fixture {
	ts := startServer(t, opts, registerEcho)
	f := &fixture{ts: ts, tok: ts.login(), keys: map[string]string{}, ids: map[string]string{}}
	res := ts.do("POST", "/api/instances", f.tok, map[string]any{"name": "myapp"})
	expect(t, "create myapp", res, 201)
	f.instA = res.body["id"].(string)
	expect(t, "create other", ts.do("POST", "/api/instances", f.tok, map[string]any{"name": "other"}), 201)
	for _, k := range []struct{ name, inst, scope, env string }{
		{"prod-write", "myapp", "write", "prod"},
		{"prod-read", "myapp", "read", "prod"},
		{"staging-write", "myapp", "write", "staging"},
		{"test-write", "myapp", "write", "test"},
		{"other-prod", "other", "write", "prod"},
		{"revoked", "myapp", "write", "prod"},
		{"rotated", "myapp", "write", "prod"},
		{"scheduled", "myapp", "write", "prod"},
	} {
		res := ts.do("POST", "/api/instances/"+k.inst+"/keys", f.tok, map[string]any{"name": k.name, "scope": k.scope, "environment": k.env})
		expect(t, "create key "+k.name, res, 201)
		f.keys[k.name], f.ids[k.name] = res.body["key"].(string), res.body["id"].(string)
	}
	expect(t, "revoke", ts.do("DELETE", "/api/keys/"+f.ids["revoked"], f.tok, nil), 200)
	res = ts.do("POST", "/api/keys/"+f.ids["rotated"]+"/rotate", f.tok, nil)
	expect(t, "rotate", res, 201)
	f.keys["rotated-new"] = res.body["key"].(string)
	revokeAt := ts.clock.Now().Add(time.Hour).Format(time.RFC3339)
	expect(t, "schedule", ts.do("POST", "/api/keys/"+f.ids["scheduled"]+"/schedule_revocation", f.tok, map[string]any{"revoke_at": revokeAt}), 200)
	return f
}

func TestDataPlaneAuthMatrix(t *testing.T) {
	f := newFixture(t, Options{BaseDomain: "example.com"})
	ts := f.ts
	cases := []struct {
		name    string
		method  string
		path    string
		auth    string // a key name of the fixture, "op" for the operator token, or a literal
		headers []string
		status  int
		message string
		env     string
	}{
		{name: "no key", method: "GET", path: "/user/1", status: 401, message: "Missing API key"},
		{name: "not a key", method: "GET", path: "/user/1", auth: "lit:hello", status: 401, message: "Invalid API key"},
		{name: "malformed key", method: "GET", path: "/user/1", auth: "lit:j17_0_prod_short", status: 401, message: "Invalid API key"},
		{name: "unknown key", method: "GET", path: "/user/1", auth: "lit:j17_0_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", status: 401, message: "Invalid API key"},
		{name: "revoked key", method: "GET", path: "/user/1", auth: "revoked", status: 401, message: "API key has been revoked"},
		{name: "rotated old key", method: "GET", path: "/user/1", auth: "rotated", status: 401, message: "API key has been revoked"},
		{name: "rotated new key", method: "GET", path: "/user/1", auth: "rotated-new", status: 200, env: "prod"},
		{name: "scheduled key before its time", method: "GET", path: "/user/1", auth: "scheduled", status: 200, env: "prod"},
		{name: "write key reads", method: "GET", path: "/user/1", auth: "prod-write", status: 200, env: "prod"},
		{name: "write key writes", method: "POST", path: "/user/1/was_created", auth: "prod-write", status: 200, env: "prod"},
		{name: "read key reads", method: "GET", path: "/user/1", auth: "prod-read", status: 200, env: "prod"},
		{name: "read key writes", method: "POST", path: "/user/1/was_created", auth: "prod-read", status: 403, message: "Read-only key cannot write events"},
		{name: "staging key without host routing", method: "GET", path: "/user/1", auth: "staging-write", status: 200, env: "staging"},
		{name: "prod host, prod key", method: "GET", path: "/user/1", auth: "prod-write", headers: []string{"Host", "myapp.example.com"}, status: 200, env: "prod"},
		{name: "staging host, staging key", method: "GET", path: "/user/1", auth: "staging-write", headers: []string{"Host", "myapp-staging.example.com"}, status: 200, env: "staging"},
		{name: "test host, test key", method: "GET", path: "/user/1", auth: "test-write", headers: []string{"Host", "myapp-test.example.com:8017"}, status: 200, env: "test"},
		{name: "prod host, staging key", method: "GET", path: "/user/1", auth: "staging-write", headers: []string{"Host", "myapp.example.com"}, status: 403, message: "Staging key cannot access production"},
		{name: "staging host, prod key", method: "GET", path: "/user/1", auth: "prod-write", headers: []string{"Host", "myapp-staging.example.com"}, status: 403, message: "Production key cannot access staging"},
		{name: "test host, staging key", method: "GET", path: "/user/1", auth: "staging-write", headers: []string{"Host", "myapp-test.example.com"}, status: 403, message: "Staging key cannot access test"},
		{name: "another instance's host", method: "GET", path: "/user/1", auth: "other-prod", headers: []string{"Host", "myapp.example.com"}, status: 403},
		{name: "operator with headers", method: "POST", path: "/user/1/was_created", auth: "op", headers: []string{"X-J17-Instance", "myapp", "X-J17-Environment", "test"}, status: 200, env: "test"},
		{name: "operator by host", method: "GET", path: "/user/1", auth: "op", headers: []string{"Host", "myapp-staging.example.com"}, status: 200, env: "staging"},
		{name: "operator without headers", method: "GET", path: "/user/1", auth: "op", status: 400},
		{name: "operator, unknown instance", method: "GET", path: "/user/1", auth: "op", headers: []string{"X-J17-Instance", "nope", "X-J17-Environment", "prod"}, status: 404},
		{name: "operator, unknown environment", method: "GET", path: "/user/1", auth: "op", headers: []string{"X-J17-Instance", "myapp", "X-J17-Environment", "dev"}, status: 400},
		{name: "operator, header disagrees with host", method: "GET", path: "/user/1", auth: "op", headers: []string{"Host", "myapp.example.com", "X-J17-Environment", "staging"}, status: 403},
		{name: "forged token", method: "GET", path: "/user/1", auth: "lit:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", headers: []string{"X-J17-Instance", "myapp", "X-J17-Environment", "prod"}, status: 401, message: "Invalid token"},
		{name: "unknown data route", method: "GET", path: "/a/b/c/d/e", auth: "prod-write", status: 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			auth := ""
			switch {
			case c.auth == "op":
				auth = f.tok
			case len(c.auth) > 4 && c.auth[:4] == "lit:":
				auth = c.auth[4:]
			case c.auth != "":
				auth = f.keys[c.auth]
			}
			res := ts.do(c.method, c.path, auth, nil, c.headers...)
			expect(t, c.name, res, c.status)
			if c.message != "" && res.body["error"] != c.message {
				t.Errorf("got error %q, want %q", res.body["error"], c.message)
			}
			if c.env != "" {
				if res.body["environment"] != c.env || res.body["instance_id"] != f.instA {
					t.Errorf("got principal %s, want myapp/%s", res.raw, c.env)
				}
			}
		})
	}
}

func TestScheduledRevocationTakesEffect(t *testing.T) {
	f := newFixture(t, Options{})
	expect(t, "before", f.ts.do("GET", "/user/1", f.keys["scheduled"], nil), 200)
	f.ts.clock.Advance(time.Hour)
	res := f.ts.do("GET", "/user/1", f.keys["scheduled"], nil)
	expect(t, "at revoke_at", res, 401)
	if res.body["error"] != "API key has been revoked" {
		t.Errorf("got error %q, want the revoked message", res.body["error"])
	}
}

func TestExpiredToken(t *testing.T) {
	f := newFixture(t, Options{})
	f.ts.clock.Advance(24*time.Hour + time.Second)
	for _, c := range []struct{ name, method, path string }{
		{"control plane", "GET", "/api/instances"},
		{"data plane", "GET", "/user/1"},
	} {
		res := f.ts.do(c.method, c.path, f.tok, nil, "X-J17-Instance", "myapp", "X-J17-Environment", "prod")
		expect(t, c.name, res, 401)
		if res.body["error"] != "Token expired" {
			t.Errorf("%s: got error %q, want \"Token expired\"", c.name, res.body["error"])
		}
	}
}

func TestCORSAndRequestID(t *testing.T) {
	ts := startServer(t, Options{}, registerEcho)
	res := ts.do("OPTIONS", "/user/1", "", nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	expect(t, "preflight", res, 204)
	for h, want := range map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, POST, OPTIONS",
	} {
		if got := res.header.Get(h); got != want {
			t.Errorf("preflight %s: got %q, want %q", h, got, want)
		}
	}
	if got := res.header.Get("Access-Control-Allow-Headers"); got == "" || got[:len("Authorization, Content-Type")] != "Authorization, Content-Type" {
		t.Errorf("preflight Access-Control-Allow-Headers: got %q", got)
	}
	res = ts.do("GET", "/user/1", "", nil)
	if res.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("error answer lacks CORS headers")
	}
	a, b := ts.do("GET", "/healthz", "", nil), ts.do("GET", "/healthz", "", nil)
	if a.header.Get("X-Request-Id") == b.header.Get("X-Request-Id") {
		t.Errorf("two requests got the same X-Request-Id %q", a.header.Get("X-Request-Id"))
	}
	res = ts.do("GET", "/healthz", "", nil, "X-Request-Id", "client-id-1")
	if got := res.header.Get("X-Request-Id"); got != "client-id-1" {
		t.Errorf("client request id: got %q, want it echoed", got)
	}
}
