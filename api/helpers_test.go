package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"golang.org/x/crypto/bcrypt"
)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const (
	testEmail    = "admin@example.com"
	testPassword = "correct horse battery staple"
)

// testServer is a real Server on a loopback port.
type testServer struct {
	t     *testing.T
	base  string
	srv   *Server
	store *control.Store
	clock *testClock
	dir   string
	logs  *lockedBuffer
}

// startServer builds a Server with opts (Control, JWTSecret, Clock, Logger and DataDir filled
// in), lets setup register routes, and serves it on 127.0.0.1 until the test ends.
func startServer(t *testing.T, opts Options, setup func(*Server)) *testServer {
	t.Helper()
	dir := t.TempDir()
	clock := newTestClock()
	store, err := control.Open(filepath.Join(dir, "control.db"), control.Options{Clock: clock, BcryptCost: bcrypt.MinCost, MaxErrorsPerPair: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateOperator(testEmail, testPassword); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	opts.Control = store
	opts.JWTSecret = bytes.Repeat([]byte("k"), 32)
	opts.Clock = clock
	opts.DataDir = dir
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return &testServer{t: t, base: "http://" + ln.Addr().String(), srv: srv, store: store, clock: clock, dir: dir, logs: logs}
}

// lockedBuffer lets the server log from many goroutines into one buffer.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// do sends a request; body is sent as is when it is a string or []byte, else as JSON.
func (ts *testServer) do(method, path, auth string, body any, headers ...string) response {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	out := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			ts.t.Fatalf("%s %s: answer is not a JSON object: %q", method, path, raw)
		}
	}
	return out
}

// login returns an operator token.
func (ts *testServer) login() string {
	ts.t.Helper()
	res := ts.do("POST", "/api/login", "", map[string]any{"email": testEmail, "password": testPassword})
	if res.status != 200 {
		ts.t.Fatalf("login: status %d, body %s", res.status, res.raw)
	}
	return res.body["token"].(string)
}

// expect checks the status of res and, for failures, that the body is the error envelope.
func expect(t *testing.T, what string, res response, status int) {
	t.Helper()
	if res.status != status {
		t.Fatalf("%s: got status %d, want %d; body %s", what, res.status, status, res.raw)
	}
	if res.header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id", what)
	}
	if status >= 400 {
		if res.body["ok"] != false {
			t.Errorf("%s: got ok=%v, want false", what, res.body["ok"])
		}
		if msg, _ := res.body["error"].(string); msg == "" {
			t.Errorf("%s: envelope has no error message: %s", what, res.raw)
		}
		if code, _ := res.body["code"].(string); code == "" {
			t.Errorf("%s: envelope has no code: %s", what, res.raw)
		}
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
