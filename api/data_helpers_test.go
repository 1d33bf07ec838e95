package api

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"golang.org/x/crypto/bcrypt"
)

// dataServer is a real server with an engine, an instance "myapp" whose staging environment runs
// testdata/data_spec.json, and a staging write key.
type dataServer struct {
	*testServer
	engine  *engine.Engine
	token   string
	key     string
	instID  string
	stopped bool
	stop    func()
}

// startDataServer starts a server with an engine over dir (a fresh directory when ""). The
// instance, spec and key are created only when fresh is true.
func startDataServer(t *testing.T, dir string, eopts engine.Options) *dataServer {
	t.Helper()
	fresh := dir == ""
	if fresh {
		dir = t.TempDir()
	}
	clock := newTestClock()
	store, err := control.Open(filepath.Join(dir, "control.db"), control.Options{Clock: clock, BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	if fresh {
		if _, err := store.CreateOperator(testEmail, testPassword); err != nil {
			t.Fatal(err)
		}
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	eopts.DataDir, eopts.Control, eopts.Logger = dir, store, log
	if eopts.Clock == nil {
		eopts.Clock = clock
	}
	eng, err := engine.New(eopts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Control: store, Engine: eng, JWTSecret: bytes.Repeat([]byte("k"), 32), Clock: clock, DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	ds := &dataServer{testServer: &testServer{t: t, base: "http://" + ln.Addr().String(), srv: srv, store: store, clock: clock, dir: dir, logs: logs}, engine: eng}
	ds.stop = func() {
		if ds.stopped {
			return
		}
		ds.stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	}
	t.Cleanup(ds.stop)
	ds.token = ds.login()
	if fresh {
		ds.setUp()
	}
	return ds
}

func (ds *dataServer) setUp() {
	t := ds.t
	t.Helper()
	res := ds.do("POST", "/api/instances", ds.token, map[string]any{"name": "myapp"})
	expect(t, "create instance", res, 201)
	ds.instID = res.body["id"].(string)
	ds.deploy(readSpec(t), false)
	res = ds.do("POST", "/api/instances/myapp/keys", ds.token, map[string]any{"name": "w", "scope": "write", "environment": "staging"})
	expect(t, "create key", res, 201)
	ds.key = res.body["key"].(string)
}

func (ds *dataServer) deploy(spec []byte, force bool) {
	ds.t.Helper()
	body := []byte(`{"environment":"staging","force":` + map[bool]string{true: "true", false: "false"}[force] + `,"spec":` + string(spec) + `}`)
	res := ds.do("POST", "/api/instances/myapp/spec", ds.token, body)
	expect(ds.t, "deploy spec", res, 200)
}

func readSpec(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "data_spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post writes with the staging key.
func (ds *dataServer) post(path string, body any, headers ...string) response {
	ds.t.Helper()
	return ds.do("POST", path, ds.key, body, headers...)
}

// get reads with the staging key.
func (ds *dataServer) get(path string) response {
	ds.t.Helper()
	return ds.do("GET", path, ds.key, nil)
}

const (
	userA = "a0000000-0000-4000-a000-000000000001"
	userB = "a0000000-0000-4000-a000-000000000002"
)

func actor() map[string]any {
	return map[string]any{"actor": map[string]any{"type": "user", "id": userA}}
}
