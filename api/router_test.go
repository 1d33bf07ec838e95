package api

import (
	"fmt"
	"testing"
)

func TestRouterMatch(t *testing.T) {
	var rt router
	name := func(n string) Handler { return func(*Request) error { return fmt.Errorf("%s", n) } }
	rt.add("GET", "/:type/:id", name("aggregate"))
	rt.add("GET", "/:type/:id/events", name("events"))
	rt.add("POST", "/:type/:id/:event", name("write"))
	rt.add("GET", "/_admin/scheduled", name("scheduled"))
	rt.add("GET", "/_admin/blobs/*name", name("blob"))
	cases := []struct {
		method, path, want, params string
	}{
		{"GET", "/user/1", "aggregate", "type=user id=1"},
		{"GET", "/user/1/events", "events", "type=user id=1"},
		{"POST", "/user/1/events", "write", "type=user id=1 event=events"},
		{"POST", "/user/1/was_created", "write", "type=user id=1 event=was_created"},
		{"GET", "/_admin/scheduled", "scheduled", ""},
		{"GET", "/_admin/blobs/a/b.wasm", "blob", "name=a/b.wasm"},
		{"GET", "/_admin/other", "aggregate", "type=_admin id=other"},
		{"GET", "/user", "", ""},
		{"GET", "/user//1", "", ""},
		{"GET", "/user/1/", "", ""},
		{"GET", "//user/1", "", ""},
		{"GET", "/_admin/blobs/a/", "", ""},
		{"GET", "/", "", ""},
		{"GET", "/a/b/c/d", "", ""},
		{"DELETE", "/user/1", "405 GET", ""},
	}
	for _, c := range cases {
		h, params, other := rt.match(c.method, c.path, nil)
		got := ""
		switch {
		case h != nil:
			got = h(nil).Error()
		case other != nil:
			got = "405 " + allowed(other)
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.method, c.path, got, c.want)
			continue
		}
		if c.params != "" {
			s := ""
			for i, p := range params {
				if i > 0 {
					s += " "
				}
				s += p.key + "=" + p.value
			}
			if s != c.params {
				t.Errorf("%s %s: got params %q, want %q", c.method, c.path, s, c.params)
			}
		}
	}
}

func TestRouterRejectsConflicts(t *testing.T) {
	for _, c := range []struct{ first, second string }{
		{"/:type/:id", "/:kind/:id/x"},
		{"/a/:id", "/a/:id"},
		{"/a/*rest", "/a/*rest"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s then %s: want a panic", c.first, c.second)
				}
			}()
			var rt router
			rt.add("GET", c.first, func(*Request) error { return nil })
			rt.add("GET", c.second, func(*Request) error { return nil })
		}()
	}
}

// TestRouterMatchIntoBufferAllocatesNothing: the parameters of a data-plane route fit the
// request's buffer, so routing a request allocates nothing.
func TestRouterMatchIntoBufferAllocatesNothing(t *testing.T) {
	var rt router
	rt.add("POST", "/:type/:id/:event", func(*Request) error { return nil })
	var r Request
	allocs := testing.AllocsPerRun(100, func() {
		if h, _, _ := rt.match("POST", "/user/1/was_created", r.paramBuf[:0]); h == nil {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per match, want 0", allocs)
	}
}
