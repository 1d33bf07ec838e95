package e2e

import (
	"reflect"
	"testing"
)

// TestIdempotentDoubleSubmit sends one request 16 times at once with one idempotency key, as a
// double-clicked "Submit Order" would (Writing Events § Idempotency: the key represents the
// intent). Inferred: exactly one event is written, and every successful answer is that write's.
func TestIdempotentDoubleSubmit(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["prod"]["write"]
	base := f.srv.url()
	order := newUUID(4)
	c := dataCall(key, "POST", "/order/"+order+"/was_placed", actorBody(map[string]any{"total": 1}, nil))
	c.Header["X-Idempotency-Key"] = []string{"submit-" + order}
	replies := race(16, 1, func(w, i int) reply { return do(base, c) })
	var first any
	ok := 0
	for _, r := range replies {
		if r.Status != 201 {
			continue
		}
		ok++
		if first == nil {
			first = r.JSON
		} else if !reflect.DeepEqual(r.JSON, first) {
			t.Errorf("two successful answers to one idempotency key differ: %s and %s", jsonString(first), r.Raw)
		}
	}
	if ok == 0 {
		t.Fatalf("no answer was 201: %v", replies)
	}
	lr := send(t, base, dataCall(key, "GET", "/order/"+order+"/length", nil), 200, "length")
	if got := lr.obj()["length"]; got != float64(1) {
		t.Errorf("length after 16 concurrent submits with one key: got %v, want 1", got)
	}
}

// TestIdempotencyScopedPerInstance uses one key and one body in two instances (Writing Events §
// Idempotency: scoping, keys from one instance never collide with keys from another).
func TestIdempotencyScopedPerInstance(t *testing.T) {
	f := sharedFixture(t)
	inst := f.controlCall(t, "POST", "/api/instances", map[string]any{"name": "idemscope"}, 201)
	g := &fixture{srv: f.srv, token: f.token, instance: inst["id"].(string)}
	g.deploy(t, "prod", suiteSpec(t))
	k := g.controlCall(t, "POST", "/api/instances/"+g.instance+"/keys",
		map[string]any{"name": "w", "scope": "write", "environment": "prod"}, 201)
	order := newUUID(4)
	for _, key := range []string{f.keys["prod"]["write"], k["key"].(string)} {
		c := dataCall(key, "POST", "/order/"+order+"/was_placed", actorBody(map[string]any{}, nil))
		c.Header["X-Idempotency-Key"] = []string{"shared-" + order}
		r := send(t, f.srv.url(), c, 201, "write with a key used in another instance")
		if got := r.Header.Get("X-Idempotency-Replayed"); got != "" {
			t.Errorf("first use of the key in this instance: X-Idempotency-Replayed %q, want none", got)
		}
		lr := send(t, f.srv.url(), dataCall(key, "GET", "/order/"+order+"/length", nil), 200, "length")
		if got := lr.obj()["length"]; got != float64(1) {
			t.Errorf("length in this instance: got %v, want 1", got)
		}
	}
}
