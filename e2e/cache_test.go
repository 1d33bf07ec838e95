package e2e

import (
	"testing"
	"time"
)

// cacheSpec has a cached type (every type is cached by default, CONTRACT.md) and a type listed in
// modules.never_cache; version marks which deploy's handlers computed the state.
func cacheSpec(version int) map[string]any {
	handler := []any{
		map[string]any{"merge": map[string]any{"target": "", "value": "$.data"}},
		map[string]any{"set": map[string]any{"target": "version", "value": version}},
	}
	events := map[string]any{"was_updated": map[string]any{"schema": map[string]any{"type": "object"}, "handler": handler}}
	return map[string]any{
		"agent_types": []any{"user"},
		"aggregate_types": map[string]any{
			"profile":   map[string]any{"events": events},
			"audit_log": map[string]any{"events": events},
		},
		"modules": map[string]any{"never_cache": []any{"audit_log"}},
	}
}

// TestCaching checks what the Caching page promises a client: a cached read catches up with a
// write within the documented worst case (~10 s); a type in never_cache is always fresh; and a
// spec deploy invalidates cached state so that handler changes take effect immediately.
func TestCaching(t *testing.T) {
	f := sharedFixture(t)
	inst := f.controlCall(t, "POST", "/api/instances", map[string]any{"name": "cachetest"}, 201)
	c := &fixture{srv: f.srv, token: f.token, instance: inst["id"].(string)}
	c.deploy(t, "prod", cacheSpec(1))
	k := c.controlCall(t, "POST", "/api/instances/"+c.instance+"/keys",
		map[string]any{"name": "cache", "scope": "write", "environment": "prod"}, 201)
	key := k["key"].(string)
	base := f.srv.url()
	profile, audit := "/profile/"+newUUID(4), "/audit_log/"+newUUID(4)
	write := func(path string, n int) {
		t.Helper()
		send(t, base, dataCall(key, "POST", path+"/was_updated", actorBody(map[string]any{"n": n}, nil)), 201, "write")
	}
	read := func(path string) map[string]any {
		t.Helper()
		return send(t, base, dataCall(key, "GET", path, nil), 200, "read").obj()
	}

	write(profile, 1)
	read(profile)
	write(profile, 2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := read(profile)
		if n, _ := lookup(got, "data.n"); n == float64(2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s still %v 10 s after the second write (Caching § Staleness expectations: worst case ~10 s)", profile, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := read(profile + "?synchronous=true"); got["metadata"].(map[string]any)["length"] != float64(2) {
		t.Errorf("GET %s?synchronous=true: %v, want length 2", profile, got)
	}

	for n := 1; n <= 5; n++ {
		write(audit, n)
		got := read(audit)
		if v, _ := lookup(got, "data.n"); v != float64(n) {
			t.Fatalf("GET %s right after write %d: %v, want data.n %d (never_cache types are always computed fresh)", audit, n, got, n)
		}
	}

	c.deploy(t, "prod", cacheSpec(2))
	if got := read(profile); got["data"].(map[string]any)["version"] != float64(2) {
		t.Errorf("GET %s right after a spec deploy: %v, want data.version 2 (Spec reference § Cache invalidation: handler changes take effect immediately)", profile, got)
	}

	// The deprecated opt-in list (CONTRACT.md § Decisions): without never_cache, only the types
	// in modules.cache are cached, so an unlisted type is computed fresh on every read.
	legacy := cacheSpec(1)
	legacy["modules"] = map[string]any{"cache": []any{"profile"}}
	c.deploy(t, "staging", legacy)
	sk := c.controlCall(t, "POST", "/api/instances/"+c.instance+"/keys",
		map[string]any{"name": "cache-staging", "scope": "write", "environment": "staging"}, 201)
	key = sk["key"].(string)
	for n := 1; n <= 5; n++ {
		write(audit, n)
		got := read(audit)
		if v, _ := lookup(got, "data.n"); v != float64(n) {
			t.Fatalf("staging GET %s right after write %d: %v, want data.n %d (type not in modules.cache is computed fresh)", audit, n, got, n)
		}
	}
}
