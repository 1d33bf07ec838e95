package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const gettingStartedSpec = `{
  "aggregate_types": {
    "user": {
      "events": {
        "was_created": {
          "schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}},
            "required": ["name", "email"]
          },
          "handler": [
            {"set": {"target": "", "value": "$.data"}},
            {"set": {"target": "created_at", "value": "$.metadata.timestamp"}}
          ]
        }
      }
    }
  },
  "agent_types": ["user", "admin"]
}`

// TestControlPlaneWalk walks every control-plane route in the order a newcomer uses them.
func TestControlPlaneWalk(t *testing.T) {
	ts := startServer(t, Options{}, nil)

	expect(t, "healthz", ts.do("GET", "/healthz", "", nil), 200)
	tok := ts.login()

	// Instances.
	res := ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"})
	expect(t, "create instance", res, 201)
	id, _ := res.body["id"].(string)
	if len(id) != 36 || res.body["name"] != "myapp" || res.body["created_at"] != "2026-01-15T10:00:00Z" {
		t.Fatalf("create instance: got %s", res.raw)
	}
	for _, env := range []string{"prod", "staging", "test"} {
		if fi, err := os.Stat(filepath.Join(ts.dir, id, env)); err != nil || !fi.IsDir() {
			t.Errorf("data directory of %s: %v", env, err)
		}
	}
	expect(t, "create taken name", ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"}), 409)
	expect(t, "create invalid name", ts.do("POST", "/api/instances", tok, map[string]any{"name": "My App"}), 422)
	for _, ref := range []string{id, "myapp"} {
		res = ts.do("GET", "/api/instances/"+ref, tok, nil)
		expect(t, "get instance "+ref, res, 200)
		if res.body["id"] != id {
			t.Errorf("get instance %s: got id %v, want %s", ref, res.body["id"], id)
		}
	}
	expect(t, "get unknown instance", ts.do("GET", "/api/instances/nope", tok, nil), 404)
	res = ts.do("GET", "/api/instances", tok, nil)
	expect(t, "list instances", res, 200)
	if data, _ := res.body["data"].([]any); len(data) != 1 {
		t.Errorf("list instances: got %s, want one instance", res.raw)
	}

	// Specs: none yet, deploy, read back, wrapped form, version history, compatibility.
	expect(t, "spec before deploy", ts.do("GET", "/api/instances/myapp/spec?environment=prod", tok, nil), 404)
	res = ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"prod","spec":`+gettingStartedSpec+`}`)
	expect(t, "deploy spec", res, 200)
	if res.body["version"] != 1.0 {
		t.Errorf("deploy spec: got version %v, want 1", res.body["version"])
	}
	res = ts.do("GET", "/api/instances/myapp/spec?environment=prod", tok, nil)
	expect(t, "get spec", res, 200)
	if res.body["version"] != 1.0 || res.body["spec"].(map[string]any)["agent_types"] == nil {
		t.Errorf("get spec: got %s", res.raw)
	}
	expect(t, "spec of another environment", ts.do("GET", "/api/instances/myapp/spec?environment=staging", tok, nil), 404)
	res = ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"prod","spec":{"spec":`+gettingStartedSpec+`}}`)
	expect(t, "deploy wrapped spec", res, 200)
	if res.body["version"] != 2.0 {
		t.Errorf("deploy wrapped spec: got version %v, want 2", res.body["version"])
	}
	res = ts.do("GET", "/api/instances/myapp/spec?environment=prod&version=1", tok, nil)
	expect(t, "get spec version 1", res, 200)
	if res.body["version"] != 1.0 {
		t.Errorf("get spec version 1: got %s", res.raw)
	}
	expect(t, "get missing spec version", ts.do("GET", "/api/instances/myapp/spec?environment=prod&version=9", tok, nil), 404)

	incompatible := `{"aggregate_types":{"user":{"events":{}}},"agent_types":["user"]}`
	res = ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"prod","spec":`+incompatible+`,"force":true}`)
	expect(t, "force in prod", res, 422)
	if errs, _ := res.body["errors"].([]any); len(errs) == 0 {
		t.Errorf("force in prod: got %s, want an errors list", res.raw)
	}
	expect(t, "deploy staging v1", ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"staging","spec":`+gettingStartedSpec+`}`), 200)
	expect(t, "incompatible staging", ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"staging","spec":`+incompatible+`}`), 422)
	res = ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"staging","spec":`+incompatible+`,"force":true}`)
	expect(t, "force in staging", res, 200)
	if res.body["version"] != 2.0 {
		t.Errorf("force in staging: got version %v, want 2", res.body["version"])
	}

	res = ts.do("POST", "/api/instances/myapp/spec", tok, `{"environment":"prod","spec":{"aggregate_types":{"user":{"events":{"x":{"schema":{"type":"object"},"handler":[{"nope":{}}]}}}},"agent_types":[]}}`)
	expect(t, "invalid spec", res, 422)
	errs, _ := res.body["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("invalid spec: got %s, want an errors list", res.raw)
	}
	for _, e := range errs {
		m := e.(map[string]any)
		if m["path"] == "" || m["message"] == "" || m["line"] == nil || m["column"] == nil {
			t.Errorf("invalid spec: error entry %v lacks path, message, line or column", m)
		}
	}

	// Keys.
	res = ts.do("POST", "/api/instances/myapp/keys", tok, map[string]any{"name": "Production Backend", "scope": "write", "environment": "prod"})
	expect(t, "create key", res, 201)
	secret, _ := res.body["key"].(string)
	keyID, _ := res.body["id"].(string)
	if !strings.HasPrefix(secret, "j17_0_prod_") || res.body["scope"] != "write" || res.body["environment"] != "prod" || res.body["name"] != "Production Backend" || res.body["created_at"] == nil {
		t.Fatalf("create key: got %s", res.raw)
	}
	expect(t, "create key with bad scope", ts.do("POST", "/api/instances/myapp/keys", tok, map[string]any{"name": "x", "scope": "admin", "environment": "prod"}), 422)
	expect(t, "create key with bad environment", ts.do("POST", "/api/instances/myapp/keys", tok, map[string]any{"name": "x", "scope": "read", "environment": "dev"}), 422)
	res = ts.do("GET", "/api/instances/myapp/keys", tok, nil)
	expect(t, "list keys", res, 200)
	if strings.Contains(string(res.raw), secret) || strings.Contains(string(res.raw), `"key"`) {
		t.Errorf("list keys shows the secret: %s", res.raw)
	}
	res = ts.do("POST", "/api/keys/"+keyID+"/rotate", tok, nil)
	expect(t, "rotate key", res, 201)
	if s, _ := res.body["key"].(string); s == "" || s == secret || res.body["id"] == keyID {
		t.Errorf("rotate key: got %s, want a new key", res.raw)
	}
	newID := res.body["id"].(string)
	expect(t, "rotate a revoked key", ts.do("POST", "/api/keys/"+keyID+"/rotate", tok, nil), 409)
	res = ts.do("POST", "/api/keys/"+newID+"/schedule_revocation", tok, map[string]any{"revoke_at": "2026-02-01T00:00:00Z"})
	expect(t, "schedule revocation", res, 200)
	if res.body["revoke_at"] != "2026-02-01T00:00:00Z" {
		t.Errorf("schedule revocation: got %s", res.raw)
	}
	expect(t, "schedule revocation with a bad time", ts.do("POST", "/api/keys/"+newID+"/schedule_revocation", tok, map[string]any{"revoke_at": "tomorrow"}), 422)
	expect(t, "revoke key", ts.do("DELETE", "/api/keys/"+newID, tok, nil), 200)
	expect(t, "revoke unknown key", ts.do("DELETE", "/api/keys/nope", tok, nil), 404)
	res = ts.do("GET", "/api/instances/myapp/keys", tok, nil)
	for _, k := range res.body["data"].([]any) {
		if k.(map[string]any)["active"] != false {
			t.Errorf("key %v: still active after rotation and revocation", k)
		}
	}

	// Control-plane routes need an operator token.
	expect(t, "instances without token", ts.do("GET", "/api/instances", "", nil), 401)
	expect(t, "instances with an API key", ts.do("GET", "/api/instances", secret, nil), 401)
	expect(t, "unknown control route", ts.do("GET", "/api/nothing", tok, nil), 404)
	res = ts.do("PUT", "/api/instances", tok, nil)
	expect(t, "wrong method", res, 405)
	if res.header.Get("Allow") != "GET, POST" {
		t.Errorf("wrong method: got Allow %q, want \"GET, POST\"", res.header.Get("Allow"))
	}

	// Secrets never reach the log, even at debug level.
	logs := ts.logs.String()
	for what, s := range map[string]string{"key": secret, "token": tok, "password": testPassword} {
		if strings.Contains(logs, s) {
			t.Errorf("the %s appears in the log", what)
		}
	}
	if !strings.Contains(logs, "msg=request") {
		t.Errorf("no access-log lines at debug level")
	}
}

func TestLoginAnswersExpiry(t *testing.T) {
	ts := startServer(t, Options{}, nil)
	res := ts.do("POST", "/api/login", "", map[string]any{"email": testEmail, "password": testPassword})
	expect(t, "login", res, 200)
	want := ts.clock.Now().Add(24 * time.Hour).Unix()
	if res.body["expires_at"] != float64(want) {
		t.Errorf("login: got expires_at %v, want %d", res.body["expires_at"], want)
	}
	res = ts.do("POST", "/api/login", "", map[string]any{"email": testEmail, "password": "wrong"})
	expect(t, "wrong password", res, 401)
	res = ts.do("POST", "/api/login", "", map[string]any{"email": "nobody@example.com", "password": testPassword})
	expect(t, "unknown email", res, 401)
}
