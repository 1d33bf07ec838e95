package api

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPanicBecomes500WithErrorID(t *testing.T) {
	var ts *testServer
	ts = startServer(t, Options{}, func(s *Server) {
		s.HandleData("GET", "/boom/:id", func(*Request) error { panic("kaboom") })
		registerEcho(s)
	})
	tok := ts.login()
	res := ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"})
	expect(t, "create instance", res, 201)
	id := res.body["id"].(string)
	h := []string{"X-J17-Instance", "myapp", "X-J17-Environment", "staging"}

	res = ts.do("GET", "/boom/1", tok, nil, h...)
	expect(t, "panic", res, 500)
	errID := res.header.Get("X-Error-Id")
	if errID == "" || res.body["error_id"] != errID || res.body["code"] != "internal_error" {
		t.Fatalf("panic: got X-Error-Id %q body %s", errID, res.raw)
	}
	if strings.Contains(string(res.raw), "kaboom") {
		t.Errorf("panic: the answer reveals the panic value: %s", res.raw)
	}
	if !strings.Contains(ts.logs.String(), errID) {
		t.Errorf("panic: error id %s not logged", errID)
	}

	// The server keeps serving.
	expect(t, "after the panic", ts.do("GET", "/user/1", tok, nil, h...), 200)

	res = ts.do("GET", "/api/instances/myapp/ops/staging/errors/"+errID, tok, nil)
	expect(t, "error lookup", res, 200)
	if res.body["error_id"] != errID || res.body["instance_id"] != id || res.body["environment"] != "staging" ||
		res.body["path"] != "/boom/1" || !strings.Contains(res.body["message"].(string), "kaboom") ||
		!strings.Contains(res.body["stack"].(string), "panic_test.go") {
		t.Errorf("error lookup: got %s", res.raw)
	}
	expect(t, "error of another environment", ts.do("GET", "/api/instances/myapp/ops/prod/errors/"+errID, tok, nil), 404)
	expect(t, "error lookup, bad environment", ts.do("GET", "/api/instances/myapp/ops/dev/errors/"+errID, tok, nil), 404)

	// The store keeps a bounded number of errors per pair (5 in these tests).
	var last string
	for i := 0; i < 6; i++ {
		last = ts.do("GET", "/boom/1", tok, nil, h...).header.Get("X-Error-Id")
	}
	expect(t, "oldest error dropped", ts.do("GET", "/api/instances/myapp/ops/staging/errors/"+errID, tok, nil), 404)
	expect(t, "newest error kept", ts.do("GET", "/api/instances/myapp/ops/staging/errors/"+last, tok, nil), 200)
}

func TestBodyOverLimit(t *testing.T) {
	ts := startServer(t, Options{MaxBody: 1000}, registerEcho)
	res := ts.do("POST", "/api/login", "", bytes.Repeat([]byte("a"), 1001))
	expect(t, "body over the limit", res, 413)
	if res.body["code"] != "payload_too_large" {
		t.Errorf("got code %v, want payload_too_large", res.body["code"])
	}
	res = ts.do("POST", "/user/1/was_created", "", bytes.Repeat([]byte("a"), 5000))
	expect(t, "data-plane body over the limit", res, 413)
	expect(t, "body at the limit", ts.do("POST", "/api/login", "", bytes.Repeat([]byte(" "), 1000)), 400)
}

// TestShutdownFinishesRequestsInFlight starts a slow request, shuts down, and checks that the
// request completes while new connections are refused.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	ts := startServer(t, Options{}, func(s *Server) {
		s.HandleData("GET", "/slow/:id", func(r *Request) error {
			close(started)
			<-release
			return echoPrincipal(r)
		})
	})
	tok := ts.login()
	expect(t, "create instance", ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"}), 201)

	got := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", ts.base+"/slow/1", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-J17-Instance", "myapp")
		req.Header.Set("X-J17-Environment", "prod")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- -1
			return
		}
		res.Body.Close()
		got <- res.StatusCode
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- ts.srv.Shutdown(ctx)
	}()
	// Wait until the listener is closed, then let the slow request finish.
	addr := strings.TrimPrefix(ts.base, "http://")
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepts connections during shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if status := <-got; status != 200 {
		t.Errorf("request in flight: got %d, want 200", status)
	}
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// TestUnmappedErrorBecomes500 checks that an error no row of statusTable knows is a 500 whose
// answer hides the error text, with an error id that finds it.
func TestUnmappedErrorBecomes500(t *testing.T) {
	ts := startServer(t, Options{}, func(s *Server) {
		s.HandleData("GET", "/fail/:id", func(*Request) error { return errors.New("disk on fire") })
	})
	tok := ts.login()
	expect(t, "create instance", ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"}), 201)
	res := ts.do("GET", "/fail/1", tok, nil, "X-J17-Instance", "myapp", "X-J17-Environment", "prod")
	expect(t, "unmapped error", res, 500)
	id := res.header.Get("X-Error-Id")
	if id == "" || strings.Contains(string(res.raw), "disk on fire") {
		t.Fatalf("unmapped error: got X-Error-Id %q body %s", id, res.raw)
	}
	res = ts.do("GET", "/api/instances/myapp/ops/prod/errors/"+id, tok, nil)
	expect(t, "lookup", res, 200)
	if res.body["message"] != "disk on fire" || res.body["status"] != 500.0 {
		t.Errorf("lookup: got %s", res.raw)
	}
}

// TestInternalAPI reaches an ops route through /_internal/ with the node secret.
func TestInternalAPI(t *testing.T) {
	secret := strings.Repeat("n", 64)
	ts := startServer(t, Options{NodeSecret: []byte(secret)}, func(s *Server) {
		s.HandleData("GET", "/boom/:id", func(*Request) error { panic("kaboom") })
	})
	tok := ts.login()
	expect(t, "create instance", ts.do("POST", "/api/instances", tok, map[string]any{"name": "myapp"}), 201)
	errID := ts.do("GET", "/boom/1", tok, nil, "X-J17-Instance", "myapp", "X-J17-Environment", "test").header.Get("X-Error-Id")
	path := "/_internal/myapp/test/errors/" + errID
	expect(t, "no node secret", ts.do("GET", path, "", nil), 401)
	expect(t, "wrong node secret", ts.do("GET", path, "", nil, "X-Node-Secret", strings.Repeat("m", 64)), 401)
	expect(t, "operator token is not a node secret", ts.do("GET", path, tok, nil), 401)
	res := ts.do("GET", path, "", nil, "X-Node-Secret", secret)
	expect(t, "node secret", res, 200)
	if res.body["error_id"] != errID {
		t.Errorf("got %s, want error %s", res.raw, errID)
	}
	expect(t, "unknown internal route", ts.do("GET", "/_internal/myapp/test/nothing", "", nil, "X-Node-Secret", secret), 404)

	off := startServer(t, Options{}, nil)
	expect(t, "internal API without a secret", off.do("GET", "/_internal/myapp/test/errors/x", "", nil, "X-Node-Secret", ""), 401)
}
