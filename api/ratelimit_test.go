package api

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

func TestRateLimitPerKey(t *testing.T) {
	f := newFixture(t, Options{RateLimitKey: 3, RateLimitIP: 100})
	ts := f.ts
	key := f.keys["prod-write"]
	for i := 2; i >= 0; i-- {
		res := ts.do("GET", "/user/1", key, nil)
		expect(t, "within the limit", res, 200)
		if got := res.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(i) {
			t.Errorf("request %d: got X-RateLimit-Remaining %q, want %d", 3-i, got, i)
		}
		if res.header.Get("X-RateLimit-Limit") != "3" || res.header.Get("X-RateLimit-Scope") != "api-key" {
			t.Errorf("request %d: got limit %q scope %q, want 3 api-key", 3-i, res.header.Get("X-RateLimit-Limit"), res.header.Get("X-RateLimit-Scope"))
		}
	}
	res := ts.do("GET", "/user/1", key, nil)
	expect(t, "over the limit", res, 429)
	if res.body["code"] != "rate_limited" || res.header.Get("Retry-After") != "20" {
		t.Errorf("over the limit: got code %v Retry-After %q, want rate_limited and 20 (one token of 3/min)", res.body["code"], res.header.Get("Retry-After"))
	}
	// Another key of the same instance has its own bucket.
	expect(t, "another key", ts.do("GET", "/user/1", f.keys["prod-read"], nil), 200)
	// Operators are exempt.
	for i := 0; i < 5; i++ {
		res := ts.do("GET", "/user/1", f.tok, nil, "X-J17-Instance", "myapp", "X-J17-Environment", "prod")
		expect(t, "operator", res, 200)
		if res.header.Get("X-RateLimit-Limit") != "" {
			t.Errorf("operator answer has rate-limit headers")
		}
	}
	// The bucket refills at 3 a minute.
	ts.clock.Advance(20 * time.Second)
	expect(t, "after a refill", ts.do("GET", "/user/1", key, nil), 200)
	expect(t, "refill spent", ts.do("GET", "/user/1", key, nil), 429)
}

func TestRateLimitPerIP(t *testing.T) {
	f := newFixture(t, Options{RateLimitKey: 100, RateLimitIP: 2})
	ts := f.ts
	expect(t, "first", ts.do("GET", "/user/1", f.keys["prod-write"], nil), 200)
	res := ts.do("GET", "/user/1", f.keys["prod-read"], nil)
	expect(t, "second, another key", res, 200)
	if res.header.Get("X-RateLimit-Scope") != "ip" || res.header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("got scope %q remaining %q, want ip 0", res.header.Get("X-RateLimit-Scope"), res.header.Get("X-RateLimit-Remaining"))
	}
	res = ts.do("GET", "/user/1", f.keys["staging-write"], nil)
	expect(t, "third, a third key", res, 429)
	if res.header.Get("X-RateLimit-Scope") != "ip" {
		t.Errorf("got scope %q, want ip", res.header.Get("X-RateLimit-Scope"))
	}
	// Failed authentication spends the IP's tokens too, so key guessing is limited.
	ts.clock.Advance(time.Minute)
	expect(t, "bad key 1", ts.do("GET", "/user/1", "j17_0_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil), 401)
	expect(t, "bad key 2", ts.do("GET", "/user/1", "j17_0_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil), 401)
	expect(t, "bad key 3", ts.do("GET", "/user/1", "j17_0_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil), 429)
}

func TestRateLimitOff(t *testing.T) {
	f := newFixture(t, Options{})
	for i := 0; i < 5; i++ {
		res := f.ts.do("GET", "/user/1", f.keys["prod-write"], nil)
		expect(t, "unlimited", res, 200)
		if res.header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("limits off: got X-RateLimit-Limit %q, want none", res.header.Get("X-RateLimit-Limit"))
		}
	}
}

// TestLimiterTableIsBounded fills a small table with many clients.
func TestLimiterTableIsBounded(t *testing.T) {
	clock := newTestClock()
	l := newLimiter(10, 64, clock)
	for i := 0; i < 10_000; i++ {
		l.take(fmt.Sprintf("client-%d", i))
		if n := l.size(); n > 64 {
			t.Fatalf("after %d clients: got %d buckets, want at most 64", i+1, n)
		}
	}
	// A client that is limited stays limited while the table is not under pressure.
	for i := 0; i < 10; i++ {
		l.take("busy")
	}
	if v := l.take("busy"); v.ok {
		t.Errorf("busy client: got a token after spending all 10")
	}
	// Buckets that have refilled are dropped first when the table is full.
	clock.Advance(time.Minute)
	for i := 0; i < 64; i++ {
		l.take(fmt.Sprintf("fresh-%d", i))
	}
	if n := l.size(); n > 64 {
		t.Errorf("got %d buckets, want at most 64", n)
	}
}

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.mu.buckets)
}
