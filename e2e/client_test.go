package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var httpClient = &http.Client{
	Timeout:   20 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
}

// call is one HTTP request of the suite.
type call struct {
	Method string
	Path   string
	// Header values are sent in order; several values make several header lines.
	Header map[string][]string
	Host   string
	Body   []byte
}

// reply is the answer to a call, its body decoded when it is JSON.
type reply struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   any
	// Err is a transport error (connection refused, reset): no answer came back.
	Err error
}

// obj returns the reply body as a JSON object (nil when it is none).
func (r reply) obj() map[string]any {
	m, _ := r.JSON.(map[string]any)
	return m
}

func (c call) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", c.Method, c.Path)
	if c.Host != "" {
		fmt.Fprintf(&b, " (Host: %s)", c.Host)
	}
	for k, vs := range c.Header {
		if k == "Authorization" {
			continue
		}
		for _, v := range vs {
			fmt.Fprintf(&b, "\n    %s: %q", k, v)
		}
	}
	if len(c.Body) > 0 {
		body := string(c.Body)
		if len(body) > 600 {
			body = body[:600] + "..."
		}
		fmt.Fprintf(&b, "\n    body: %s", body)
	}
	return b.String()
}

func (r reply) String() string {
	if r.Err != nil {
		return "transport error: " + r.Err.Error()
	}
	body := string(r.Raw)
	if len(body) > 800 {
		body = body[:800] + "..."
	}
	return fmt.Sprintf("%d %s", r.Status, body)
}

// do sends c to base and reads the whole answer.
func do(base string, c call) reply {
	req, err := http.NewRequest(c.Method, base+c.Path, bytes.NewReader(c.Body))
	if err != nil {
		return reply{Err: err}
	}
	if c.Body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.Host != "" {
		req.Host = c.Host
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return reply{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw, Err: err}
	if len(raw) > 0 {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			r.JSON = v
		}
	}
	return r
}

// mustJSON encodes v, failing t on error.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is an instance set up over the control plane as the README's walk-through does: an
// operator token, the instance, the suite's spec deployed to every environment, and a write key
// and a read key per environment.
type fixture struct {
	srv      *server
	token    string
	instance string // the instance id (uuid)
	keys     map[string]map[string]string
}

// controlCall is a control-plane call with the operator token.
func (f *fixture) controlCall(t testing.TB, method, path string, body any, want int) map[string]any {
	t.Helper()
	c := call{Method: method, Path: path, Header: map[string][]string{
		"Authorization": {"Bearer " + f.token}, "Content-Type": {"application/json"},
	}}
	if body != nil {
		c.Body = mustJSON(t, body)
	}
	r := do(f.srv.url(), c)
	if r.Err != nil || r.Status != want {
		t.Fatalf("control plane: %s\n  got: %s\n  want status %d\nserver log:\n%s", c, r, want, tail(f.srv.logs()))
	}
	return r.obj()
}

// setup logs in, creates the instance, deploys spec to every environment and creates the keys.
func setup(t testing.TB, s *server, spec any) *fixture {
	t.Helper()
	f := &fixture{srv: s, keys: map[string]map[string]string{}}
	f.token = login(t, s)
	inst := f.controlCall(t, "POST", "/api/instances", map[string]any{"name": instanceName}, 201)
	f.instance, _ = inst["id"].(string)
	if f.instance == "" {
		t.Fatalf("POST /api/instances: no id in %v", inst)
	}
	for _, env := range environments {
		f.deploy(t, env, spec)
		f.keys[env] = map[string]string{}
		for _, scope := range []string{"write", "read"} {
			k := f.controlCall(t, "POST", "/api/instances/"+f.instance+"/keys",
				map[string]any{"name": env + "-" + scope, "scope": scope, "environment": env}, 201)
			key, _ := k["key"].(string)
			if !strings.HasPrefix(key, "j17_0_"+env+"_") {
				t.Fatalf("created %s %s key %q: want prefix j17_0_%s_", env, scope, key, env)
			}
			f.keys[env][scope] = key
		}
	}
	return f
}

func login(t testing.TB, s *server) string {
	t.Helper()
	r := do(s.url(), call{Method: "POST", Path: "/api/login", Header: map[string][]string{"Content-Type": {"application/json"}},
		Body: mustJSON(t, map[string]string{"email": adminEmail, "password": adminPassword})})
	token, _ := r.obj()["token"].(string)
	if r.Status != 200 || token == "" {
		t.Fatalf("POST /api/login: got %s, want 200 with a token", r)
	}
	return token
}

// deploy deploys spec to env with force, so that a redeploy may change handlers freely.
func (f *fixture) deploy(t testing.TB, env string, spec any) {
	t.Helper()
	body := map[string]any{"environment": env, "spec": spec}
	if env != "prod" {
		body["force"] = true
	}
	f.controlCall(t, "POST", "/api/instances/"+f.instance+"/spec", body, 200)
}

// suiteSpec is testdata/spec.json, the spec of every documented example.
func suiteSpec(t testing.TB) any {
	t.Helper()
	raw, err := os.ReadFile("testdata/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("testdata/spec.json: %v", err)
	}
	return v
}

// dataCall builds a data-plane call with an API key.
func dataCall(key, method, path string, body any) call {
	c := call{Method: method, Path: path, Header: map[string][]string{"Authorization": {"Bearer " + key}}}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(fmt.Sprintf("BUG: cannot encode test body: %v", err))
		}
		c.Body = b
		c.Header["Content-Type"] = []string{"application/json"}
	}
	return c
}

// sharedState is the server every data case runs against, started on first use and stopped
// by TestMain.
type sharedState struct {
	once sync.Once
	srv  *server
	fix  *fixture
	err  string
}

var shared sharedState

func (s *sharedState) stop() {
	if s.srv != nil {
		s.srv.stop()
	}
}

// sharedFixture starts the shared server and instance once per run.
func sharedFixture(t *testing.T) *fixture {
	t.Helper()
	shared.once.Do(func() {
		srv := &server{dataDir: sharedDataDir(), extra: []string{
			"--rate-limit-key", "0", "--rate-limit-ip", "0", "--base-domain", baseDomain,
		}}
		if err := srv.start(); err != nil {
			shared.err = err.Error()
			return
		}
		shared.srv = srv
		ft := &fatalRecorder{TB: t}
		func() {
			defer func() {
				if r := recover(); r != nil && r != errFatal {
					panic(r)
				}
			}()
			shared.fix = setup(ft, srv, suiteSpec(t))
		}()
		if ft.msg != "" {
			shared.err = ft.msg
			shared.fix = nil
		}
	})
	if shared.fix == nil {
		t.Fatalf("shared server setup failed: %s", shared.err)
	}
	return shared.fix
}

// sharedDataDir is a data directory that outlives any one test; TestMain removes it.
func sharedDataDir() string {
	dir, err := os.MkdirTemp(os.TempDir(), "j17-e2e-data-")
	if err != nil {
		panic(err)
	}
	sharedDirs = append(sharedDirs, dir)
	return dir
}

var sharedDirs []string

var errFatal = fmt.Errorf("fatal")

// fatalRecorder lets setup run once on behalf of every test: a fatal failure is recorded and
// reported to each test that needs the shared server, instead of ending only the first.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(errFatal)
}

func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(errFatal)
}

func tail(s string) string {
	const n = 3000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
