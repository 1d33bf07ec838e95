package bench

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

type seenRequest struct {
	method, uri, auth string
	body              map[string]any
}

// fakeDataPlane answers like the documented data plane: 201 for writes, 409 when
// previous_length is 7, {"length":3} for lengths, 200 for reads and listings.
func fakeDataPlane(t *testing.T) (*J17, func() []seenRequest) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []seenRequest
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		r := seenRequest{method: string(ctx.Method()), uri: string(ctx.RequestURI()), auth: string(ctx.Request.Header.Peek("Authorization"))}
		if len(ctx.PostBody()) > 0 {
			if err := json.Unmarshal(ctx.PostBody(), &r.body); err != nil {
				ctx.SetStatusCode(400)
				ctx.SetBodyString(`{"ok":false,"error":"bad json"}`)
				return
			}
		}
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.uri, "/length"):
			ctx.SetBodyString(`{"ok":true,"length":3}`)
		case r.method == "POST" && strings.Contains(string(ctx.PostBody()), `"previous_length":7`):
			ctx.SetStatusCode(409)
			ctx.SetBodyString(`{"ok":false,"error":"conflict"}`)
		case r.method == "POST":
			ctx.SetStatusCode(201)
			ctx.SetBodyString(`{"ok":true,"stream_id":"1-0"}`)
		default:
			ctx.SetBodyString(`{"ok":true}`)
		}
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	j := &J17{addr: ln.Addr().String(), key: "j17_0_test_k", hc: &fasthttp.HostClient{Addr: ln.Addr().String(), ReadTimeout: 5 * time.Second}}
	return j, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// The requests follow the Writing Events, Batch Operations and Reading Aggregates pages.
func TestJ17ConnSpeaksTheDataPlane(t *testing.T) {
	j, seen := fakeDataPlane(t)
	c, _ := j.Dial()
	id := NewID()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Append("item", id, []Event{{Type: "was_created", Data: []byte(`{"a":1}`)}}, 0))
	must(c.Append("item", id, events(3, 0), -1))
	if err := c.Append("item", id, events(1, 0), 7); !errors.Is(err, ErrConflict) {
		t.Errorf("append at a stale length: got %v, want ErrConflict", err)
	}
	must(c.PlaceOrder(id, []string{"s1", "s2"}))
	must(c.Read("item", id, true))
	must(c.Read("item", id, false))
	n, err := c.Length("item", id)
	if err != nil || n != 3 {
		t.Errorf("length: got %d, %v; want 3", n, err)
	}
	must(c.List("item", 100))

	want := []struct{ method, uri string }{
		{"POST", "/item/" + id + "/was_created"}, {"POST", "/item/" + id}, {"POST", "/item/" + id + "/was_created"},
		{"POST", "/order/" + id + "/was_placed"}, {"GET", "/item/" + id}, {"GET", "/item/" + id + "?synchronous=true"},
		{"GET", "/item/" + id + "/length"}, {"GET", "/item?limit=100"},
	}
	got := seen()
	if len(got) != len(want) {
		t.Fatalf("got %d requests, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].method != w.method || got[i].uri != w.uri || got[i].auth != "Bearer j17_0_test_k" {
			t.Errorf("request %d: got %s %s (%s), want %s %s with the key", i, got[i].method, got[i].uri, got[i].auth, w.method, w.uri)
		}
	}
	single, batch := got[0].body, got[1].body
	meta, _ := single["metadata"].(map[string]any)
	actor, _ := meta["actor"].(map[string]any)
	if single["data"] == nil || actor["type"] != "user" || actor["id"] == "" || meta["previous_length"] != 0.0 {
		t.Errorf("single write body: got %v, want data and metadata with the actor and previous_length 0", single)
	}
	es, _ := batch["events"].([]any)
	bm, _ := batch["metadata"].(map[string]any)
	if _, has := bm["previous_length"]; len(es) != 3 || has {
		t.Errorf("batch body: got %v, want 3 events and no previous_length", batch)
	}
	if items, _ := got[3].body["data"].(map[string]any)["items"].([]any); len(items) != 2 {
		t.Errorf("order body: got %v, want 2 items", got[3].body)
	}
}

func TestNewIDIsLowercaseUUIDv4(t *testing.T) {
	id := NewID()
	if len(id) != 36 || id[14] != '4' || !strings.ContainsRune("89ab", rune(id[19])) || strings.ToLower(id) != id {
		t.Errorf("got %q, want a lowercase UUID v4", id)
	}
}
