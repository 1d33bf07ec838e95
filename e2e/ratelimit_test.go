package e2e

import (
	"strconv"
	"testing"
)

// TestRateLimitHeaders checks the rate-limit headers of data-plane answers and the 429 past the
// limit (API Overview § Rate limits; Authentication § Rate limits).
func TestRateLimitHeaders(t *testing.T) {
	const limit = 5
	s := newServer(t, serverOptions{rateLimitKey: limit, rateLimitIP: 1000})
	f := setup(t, s, suiteSpec(t))
	key := f.keys["prod"]["read"]
	path := "/order/" + newUUID(4)
	for i := 1; i <= limit; i++ {
		c := dataCall(key, "GET", path, nil)
		r := do(s.url(), c)
		mustStatus(t, "read within the limit", c, r, 404)
		h := r.Header
		// The scope's value is not asserted: the Authentication page says api-key, the newer
		// Writing Events page "instance or ip".
		if h.Get("X-RateLimit-Limit") != strconv.Itoa(limit) || h.Get("X-RateLimit-Remaining") != strconv.Itoa(limit-i) || h.Get("X-RateLimit-Scope") == "" {
			t.Errorf("request %d: X-RateLimit-Limit %q, -Remaining %q, -Scope %q; want %d, %d, a scope",
				i, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Scope"), limit, limit-i)
		}
	}
	c := dataCall(key, "GET", path, nil)
	r := do(s.url(), c)
	mustStatus(t, "read past the limit", c, r, 429)
	if r.obj()["ok"] != false || r.obj()["code"] != "rate_limited" || r.Header.Get("X-Request-Id") == "" {
		t.Errorf("429 answer: %s with X-Request-Id %q; want the envelope with code rate_limited", r, r.Header.Get("X-Request-Id"))
	}
	if r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("429 answer has no X-RateLimit-Limit header")
	}
	// Another key has its own budget, and writes carry the headers too.
	other := f.keys["prod"]["write"]
	c = dataCall(other, "POST", path+"/was_placed", actorBody(map[string]any{}, nil))
	r = do(s.url(), c)
	mustStatus(t, "another key's first write", c, r, 201)
	if r.Header.Get("X-RateLimit-Limit") != strconv.Itoa(limit) || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(limit-1) {
		t.Errorf("first write of another key: X-RateLimit-Limit %q, -Remaining %q; want %d, %d",
			r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), limit, limit-1)
	}
}
