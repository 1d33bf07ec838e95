package fuzz

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/api"
	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
	"golang.org/x/crypto/bcrypt"
)

// apiServer serves a fresh server over an in-memory listener and returns a client for it and an
// operator token; instance "myapp" exists with a staging write key.
func apiServer(f *testing.F) (*fasthttp.Client, string, string) {
	dir := f.TempDir()
	store, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := store.CreateOperator("op@example.com", "pw"); err != nil {
		f.Fatal(err)
	}
	if _, err := store.CreateInstance("myapp"); err != nil {
		f.Fatal(err)
	}
	_, key, err := store.CreateKey("myapp", "k", control.ScopeWrite, control.EnvStaging)
	if err != nil {
		f.Fatal(err)
	}
	srv, err := api.New(api.Options{Control: store, JWTSecret: []byte(strings.Repeat("s", 32)), DataDir: dir, RateLimitKey: 0, RateLimitIP: 0, MaxBody: 4096})
	if err != nil {
		f.Fatal(err)
	}
	srv.HandleData("GET", "/:type/:id", func(r *api.Request) error {
		api.WriteJSON(r.Ctx, 200, map[string]any{"ok": true})
		return nil
	})
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = srv.Serve(ln) }()
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = store.Close()
	})
	client := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI("http://j17/api/login")
	req.Header.SetMethod("POST")
	req.SetBodyString(`{"email":"op@example.com","password":"pw"}`)
	if err := client.Do(req, res); err != nil {
		f.Fatal(err)
	}
	var login struct{ Token string }
	if err := json.Unmarshal(res.Body(), &login); err != nil || login.Token == "" {
		f.Fatalf("login: %s", res.Body())
	}
	return client, login.Token, key
}

// FuzzAPIRequest sends arbitrary requests to the real handler chain. Property: no input makes a
// server error, every answer carries X-Request-Id, and every failure is the JSON error envelope.
func FuzzAPIRequest(f *testing.F) {
	seeds := []struct {
		method, path string
		auth         uint8
		body         string
	}{
		{"POST", "/api/login", 0, `{"email":"op@example.com","password":"pw"}`},
		{"POST", "/api/instances", 1, `{"name":"other"}`},
		{"POST", "/api/instances", 1, `{"name":5}`},
		{"POST", "/api/instances/myapp/spec", 1, `{"environment":"staging","spec":{"aggregate_types":{},"agent_types":["user"]}}`},
		{"POST", "/api/instances/myapp/spec", 1, `{"environment":"prod","spec":{"spec":{"aggregate_types":[]}}}`},
		{"GET", "/api/instances/myapp/spec?environment=staging&version=x", 1, ``},
		{"POST", "/api/instances/myapp/keys", 1, `{"name":"n","scope":"read","environment":"test"}`},
		{"POST", "/api/keys/x/schedule_revocation", 1, `{"revoke_at":"2030-01-01T00:00:00Z"}`},
		{"DELETE", "/api/keys/x", 1, ``},
		{"GET", "/api/instances/myapp/ops/prod/errors/e", 1, ``},
		{"GET", "/user/1", 2, ``},
		{"POST", "/user/1/was_created", 2, `{"data":{}}`},
		{"GET", "/user/1", 3, ``},
		{"OPTIONS", "/user/1", 0, ``},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.auth, []byte(s.body))
	}
	client, token, key := apiServer(f)
	f.Fuzz(func(t *testing.T, method, path string, auth uint8, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || method == "" || strings.ContainsAny(method, " \r\n\t:/") {
			return
		}
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(res)
		req.SetRequestURI("http://j17" + path)
		req.Header.SetMethod(method)
		req.SetBody(body)
		switch auth % 4 {
		case 1:
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("X-J17-Instance", "myapp")
			req.Header.Set("X-J17-Environment", "staging")
		case 2:
			req.Header.Set("Authorization", "Bearer "+key)
		case 3:
			req.Header.Set("Authorization", "Bearer j17_0_prod_"+string(body))
		}
		if err := client.DoTimeout(req, res, 10*time.Second); err != nil {
			return // the client refused to send it
		}
		status := res.StatusCode()
		if status >= 500 {
			t.Fatalf("%s %s: got %d: %s", method, path, status, res.Body())
		}
		if len(res.Header.Peek("X-Request-Id")) == 0 {
			t.Fatalf("%s %s: no X-Request-Id", method, path)
		}
		if status >= 400 {
			var env struct {
				OK    *bool
				Error string
				Code  string
			}
			if err := json.Unmarshal(res.Body(), &env); err != nil || env.OK == nil || *env.OK || env.Error == "" || env.Code == "" {
				t.Fatalf("%s %s: %d answer is not the error envelope: %s", method, path, status, res.Body())
			}
		}
	})
}
