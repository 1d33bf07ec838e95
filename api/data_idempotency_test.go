package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
)

func TestIdempotency(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	path := "/counter/global/was_noted"
	body := `{"data":{"note":"a","n":{"y":1,"x":2}},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`
	reordered := `{"metadata":{"actor":{"id":"` + userA + `","type":"user"}},"data":{"n":{"x":2,"y":1},"note":"a"}}`

	first := ds.post(path, body, "X-Idempotency-Key", "k1", "X-Request-Id", "first")
	expect(t, "first write", first, 201)
	again := ds.post(path, reordered, "X-Idempotency-Key", "k1", "X-Request-Id", "second")
	expect(t, "replay", again, 201)
	if string(again.raw) != string(first.raw) {
		t.Errorf("replay body %s, want the original %s", again.raw, first.raw)
	}
	if again.header.Get("X-Idempotency-Replayed") != "true" || again.header.Get("X-Request-Id") != "first" {
		t.Errorf("replay headers: replayed %q, request id %q; want true, first", again.header.Get("X-Idempotency-Replayed"), again.header.Get("X-Request-Id"))
	}
	if n := ds.get("/counter/global/length").body["length"]; n != 1.0 {
		t.Fatalf("length after a replay = %v, want 1", n)
	}
	other := ds.post(path, strings.Replace(body, `"a"`, `"b"`, 1), "X-Idempotency-Key", "k1")
	expect(t, "reuse with another body", other, 422)
	if other.body["error"] != "Idempotency key reused with different request body" {
		t.Errorf("reuse error %q", other.body["error"])
	}

	// Failures are not remembered: the same key works once the request is fixed.
	bad := ds.post(path, `{"data":{},"metadata":{}}`, "X-Idempotency-Key", "k2")
	expect(t, "failed write", bad, 400)
	expect(t, "fixed write", ds.post(path, body, "X-Idempotency-Key", "k2"), 201)

	// Batches replay too.
	batch := `{"events":[{"type":"was_incremented"},{"type":"was_incremented"}],"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`
	b1 := ds.post("/counter/global", batch, "X-Idempotency-Key", "b1")
	b2 := ds.post("/counter/global", batch, "X-Idempotency-Key", "b1")
	expect(t, "batch", b1, 201)
	if string(b1.raw) != string(b2.raw) || b2.header.Get("X-Idempotency-Replayed") != "true" {
		t.Errorf("batch replay %s (replayed %q), want %s", b2.raw, b2.header.Get("X-Idempotency-Replayed"), b1.raw)
	}

	// 24 hours after the last use the key is forgotten.
	ds.clock.Advance(23 * time.Hour)
	expect(t, "replay within 24h of the last use", ds.post(path, body, "X-Idempotency-Key", "k1"), 201)
	ds.clock.Advance(23 * time.Hour)
	r := ds.post(path, body, "X-Idempotency-Key", "k1")
	if r.header.Get("X-Idempotency-Replayed") != "true" {
		t.Error("a replay did not renew the key for another 24 hours")
	}
	ds.clock.Advance(25 * time.Hour)
	r = ds.post(path, body, "X-Idempotency-Key", "k1")
	expect(t, "write after expiry", r, 201)
	if r.header.Get("X-Idempotency-Replayed") != "" || string(r.raw) == string(first.raw) {
		t.Errorf("an expired key was replayed: %s", r.raw)
	}
}

func TestIdempotencyKeyRules(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	body := `{"data":{},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`
	cases := []struct {
		name string
		keys []string
		want string
	}{
		{"empty", []string{""}, "Idempotency key cannot be empty"},
		{"too long", []string{strings.Repeat("k", 256)}, "Idempotency key exceeds 255 character limit"},
		{"not printable", []string{"caf\u00e9"}, "Idempotency key contains invalid characters (must be printable ASCII)"},
		{"two headers", []string{"a", "b"}, "Multiple X-Idempotency-Key headers not allowed"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", ds.base+"/counter/global/was_incremented", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ds.key)
		req.Header.Set("Content-Type", "application/json")
		for _, k := range c.keys {
			req.Header.Add("X-Idempotency-Key", k)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Error string }
		err = json.NewDecoder(res.Body).Decode(&env)
		res.Body.Close()
		if err != nil || res.StatusCode != 422 || env.Error != c.want {
			t.Errorf("%s: got status %d, error %q; want 422, %q", c.name, res.StatusCode, env.Error, c.want)
		}
	}
	if n := ds.get("/counter/global/length").body["length"]; n != 0.0 {
		t.Errorf("refused keys wrote %v events", n)
	}
	expect(t, "255 bytes is allowed", ds.post("/counter/global/was_incremented", body, "X-Idempotency-Key", strings.Repeat("k", 255)), 201)
}

// TestIdempotencyConcurrentSameKey: many requests with one key at once write once.
func TestIdempotencyConcurrentSameKey(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	body := `{"data":{},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`
	var wg sync.WaitGroup
	bodies := make([]string, 16)
	for i := range bodies {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := ds.post("/counter/global/was_incremented", body, "X-Idempotency-Key", "same")
			if res.status != 201 {
				t.Errorf("request %d: status %d %s", i, res.status, res.raw)
			}
			bodies[i] = string(res.raw)
		}(i)
	}
	wg.Wait()
	for i, b := range bodies {
		if b != bodies[0] {
			t.Errorf("request %d answered %s, want %s", i, b, bodies[0])
		}
	}
	if n := ds.get("/counter/global/length").body["length"]; n != 1.0 {
		t.Fatalf("length %v, want 1", n)
	}
}

// TestIdempotencyScopedPerEnvironment: the same key in another environment is another key.
func TestIdempotencyScopedPerEnvironment(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	spec := readSpec(t)
	res := ds.do("POST", "/api/instances/myapp/spec", ds.token, []byte(`{"environment":"test","spec":`+string(spec)+`}`))
	expect(t, "deploy test", res, 200)
	body := `{"data":{},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`
	s := ds.post("/counter/global/was_incremented", body, "X-Idempotency-Key", "k")
	op := ds.do("POST", "/counter/global/was_incremented", ds.token, body, "X-Idempotency-Key", "k", "X-J17-Instance", "myapp", "X-J17-Environment", "test")
	expect(t, "staging", s, 201)
	expect(t, "test", op, 201)
	if op.header.Get("X-Idempotency-Replayed") != "" {
		t.Errorf("a staging key was replayed in test: %s", op.raw)
	}
}
