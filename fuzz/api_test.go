package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/api"
	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
	"golang.org/x/crypto/bcrypt"
)

// The fixture's ids: a user that exists, an order whose placement fired an implication into the
// singleton ledger and scheduled an event, and the operator's credentials.
const (
	apiUser      = "a0000000-0000-4000-a000-000000000001"
	apiOrder     = "b0000000-0000-4000-b000-000000000002"
	apiEmail     = "op@example.com"
	apiPassword  = "pw"
	apiOpsPrefix = "/api/instances/myapp/ops/staging"
	// apiRestartEvery bounds the engine's state: a worker starts a fresh fixture after this many
	// inputs, since many of them write.
	apiRestartEvery = 2000
)

// apiFixture is the real server (control store, engine, api.Server) over an in-memory listener,
// with instance "myapp", testdata/api_spec.json deployed to staging and a staging write key.
type apiFixture struct {
	dir    string
	store  *control.Store
	eng    *engine.Engine
	srv    *api.Server
	served chan error
	client *fasthttp.Client
	token  string
	key    string
}

// apiStart builds a fixture in a fresh directory under parent.
func apiStart(parent string) (fx *apiFixture, err error) {
	spec, err := os.ReadFile(filepath.Join("testdata", "api_spec.json"))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "api-")
	if err != nil {
		return nil, err
	}
	fx = &apiFixture{dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, fx.close())
		}
	}()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if fx.store, err = control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost}); err != nil {
		return fx, err
	}
	if _, err = fx.store.CreateOperator(apiEmail, apiPassword); err != nil {
		return fx, err
	}
	// No scheduler goroutine: schedules fire only through run_due, so a run is reproducible.
	if fx.eng, err = engine.New(engine.Options{DataDir: dir, Control: fx.store, NoSync: true, Logger: quiet, SchedulerPoll: -1}); err != nil {
		return fx, err
	}
	fx.srv, err = api.New(api.Options{Control: fx.store, Engine: fx.eng, JWTSecret: []byte(strings.Repeat("s", 32)), DataDir: dir, Logger: quiet, MaxBody: 8192})
	if err != nil {
		return fx, err
	}
	ln := fasthttputil.NewInmemoryListener()
	fx.served = make(chan error, 1)
	go func() { fx.served <- fx.srv.Serve(ln) }()
	fx.client = &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	return fx, fx.setUp(spec)
}

// setUp logs in, creates the instance, deploys the spec, creates the key and writes the events
// that give the read, audit, schedule and implication routes something to find.
func (fx *apiFixture) setUp(spec []byte) error {
	var login struct{ Token string }
	if err := fx.call("POST", "/api/login", "", `{"email":"`+apiEmail+`","password":"`+apiPassword+`"}`, 200, &login); err != nil {
		return err
	}
	fx.token = login.Token
	if err := fx.call("POST", "/api/instances", fx.token, `{"name":"myapp"}`, 201, nil); err != nil {
		return err
	}
	if err := fx.call("POST", "/api/instances/myapp/spec", fx.token, `{"environment":"staging","spec":`+string(spec)+`}`, 200, nil); err != nil {
		return err
	}
	var key struct{ Key string }
	if err := fx.call("POST", "/api/instances/myapp/keys", fx.token, `{"name":"w","scope":"write","environment":"staging"}`, 201, &key); err != nil {
		return err
	}
	fx.key = key.Key
	actor := `"metadata":{"actor":{"type":"user","id":"` + apiUser + `"}}`
	writes := []struct{ path, body string }{
		{"/user/" + apiUser + "/was_created", `{"data":{"name":"Ann"},` + actor + `}`},
		{"/user/" + apiUser, `{"events":[{"type":"had_name_updated","data":{"name":"Bo"}},{"type":"had_name_updated","data":{"name":"Cy"}}],` + actor + `}`},
		{"/order/" + apiOrder + "/was_placed", `{"data":{"items":[1,2]},` + actor + `}`},
	}
	for _, w := range writes {
		if err := fx.call("POST", w.path, fx.key, w.body, 201, nil); err != nil {
			return err
		}
	}
	return nil
}

// call sends one request and checks its status, decoding the answer into out when not nil.
func (fx *apiFixture) call(method, path, bearer, body string, want int, out any) error {
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI("http://j17" + path)
	req.Header.SetMethod(method)
	req.Header.SetContentType("application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.SetBodyString(body)
	if err := fx.client.DoTimeout(req, res, 10*time.Second); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode() != want {
		return fmt.Errorf("%s %s: got %d, want %d: %s", method, path, res.StatusCode(), want, res.Body())
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Body(), out)
}

// close stops the server, the engine and the store, and removes the directory.
func (fx *apiFixture) close() error {
	var errs []error
	if fx.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, fx.srv.Shutdown(ctx), <-fx.served)
		cancel()
	}
	if fx.eng != nil {
		errs = append(errs, fx.eng.Close())
	}
	if fx.store != nil {
		errs = append(errs, fx.store.Close())
	}
	errs = append(errs, os.RemoveAll(fx.dir))
	return errors.Join(errs...)
}

// apiSeed is one request of the seed corpus. flags picks the credentials (bits 0-1: none, the
// operator with the staging headers, the write key, a forged key), the Content-Type (bits 2-3:
// none, JSON, text/plain, a +json type) and whether the idempotency key is sent twice (bit 4).
type apiSeed struct {
	method, path string
	flags        uint8
	idemKey      string
	body         string
}

const (
	apiAuthNone = iota
	apiAuthOperator
	apiAuthKey
	apiAuthForged
)

const apiJSON = 1 << 2

// apiSeeds covers every data-plane route and the operations, with valid and hostile bodies,
// queries and idempotency keys.
func apiSeeds() []apiSeed {
	u, o := "/user/"+apiUser, "/order/"+apiOrder
	actor := `"metadata":{"actor":{"type":"user","id":"` + apiUser + `"}}`
	key, op := uint8(apiAuthKey|apiJSON), uint8(apiAuthOperator|apiJSON)
	return []apiSeed{
		// Writes: one event, batches, OCC, idempotency keys valid and hostile.
		{"POST", u + "/had_name_updated", key, "", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key, "k-1", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key, "k-1", `{ "metadata":{"actor":{"id":"` + apiUser + `","type":"user"}},"data":{"name":"Di"}}`},
		{"POST", u + "/had_name_updated", key, "k-1", `{"data":{"name":"Ed"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key | 1<<4, "k-2", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key, strings.Repeat("x", 300), `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key, "\x7f\x01", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", key, "", `{"data":{"name":"Di"},"metadata":{"actor":{"type":"user","id":"` + apiUser + `"},"previous_length":1}}`},
		{"POST", u + "/had_name_updated", key, "", `{"data":{},` + actor + `}`},
		{"POST", u + "/had_name_updated", apiAuthKey | 2<<2, "", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/had_name_updated", apiAuthKey | 3<<2, "", `{"data":{"name":"Di"},` + actor + `}`},
		{"POST", u + "/no_such_event", key, "", `{"data":{},` + actor + `}`},
		{"POST", u + "/was_created", key, "", `{"data":{"name":"x"}`},
		{"POST", u + "/was_created", key, "", `[]`},
		{"POST", u + "/was_created", key, "", `{"data":{"name":"x"},"metadata":{"actor":{"type":"robot","id":"` + apiUser + `"}}}`},
		{"POST", "/user/global/was_created", key, "", `{"data":{"name":"g"},` + actor + `}`},
		{"POST", "/user/NOT-A-UUID/was_created", key, "", `{"data":{"name":"g"},` + actor + `}`},
		{"POST", "/nope/" + apiUser + "/was_created", key, "", `{"data":{},` + actor + `}`},
		{"POST", o + "/was_placed", key, "", `{"data":{"items":[]},` + actor + `}`},
		{"POST", o + "/was_cancelled", key, "", `{"data":{},` + actor + `}`},
		{"POST", u, key, "", `{"events":[{"type":"had_name_updated","data":{"name":"a"}},{"type":"had_name_updated","data":{"name":"b"}}],` + actor + `}`},
		{"POST", u, key, "b-1", `{"events":[{"type":"had_name_updated","data":{"name":"a"}}],` + actor + `}`},
		{"POST", u, key, "", `{"events":[],` + actor + `}`},
		{"POST", u, key, "", `{"events":[{"type":"had_name_updated","data":{}}],` + actor + `}`},
		{"POST", u, key, "", `{"events":{"type":"x"}}`},
		{"POST", u + "/was_created", apiAuthNone | apiJSON, "", `{"data":{"name":"x"},` + actor + `}`},
		{"POST", u + "/was_created", apiAuthForged | apiJSON, "", `{"data":{"name":"x"},` + actor + `}`},
		{"POST", u + "/was_created", op, "", `{"data":{"name":"x"},` + actor + `}`},
		// Reads.
		{"GET", u, key, "", ``},
		{"GET", u + "?synchronous=true", key, "", ``},
		{"GET", u + "?synchronous=maybe", key, "", ``},
		{"GET", u + "?at=2", key, "", ``},
		{"GET", u + "?at=4102444800", key, "", ``},
		{"GET", u + "?at=-1", key, "", ``},
		{"GET", u + "?at=99999999999999999999", key, "", ``},
		{"GET", u + "/length", key, "", ``},
		{"GET", u + "/events?start=0&count=2", key, "", ``},
		{"GET", u + "/events?start=2&count=1000000", key, "", ``},
		{"GET", u + "/events?start=x&count=-3", key, "", ``},
		{"GET", "/user?limit=1", key, "", ``},
		{"GET", "/user?limit=2&cursor=" + apiUser + "&resolve=true", key, "", ``},
		{"GET", "/user?limit=0&cursor=%00&resolve=1", key, "", ``},
		{"GET", "/ledger/global", key, "", ``},
		{"GET", "/user/" + apiOrder, key, "", ``},
		// Audit.
		{"GET", u + "/audit/verify-chain", key, "", ``},
		{"GET", u + "/audit/merkle-root", key, "", ``},
		{"GET", u + "/audit/merkle-proof/0", key, "", ``},
		{"GET", u + "/audit/merkle-proof/2", key, "", ``},
		{"GET", u + "/audit/merkle-proof/-1", key, "", ``},
		{"GET", u + "/audit/merkle-proof/1e9", key, "", ``},
		{"POST", u + "/audit/merkle-verify", key, "", `{"index":0,"leaf":"00","path":["zz"],"root":"00","tree_size":3}`},
		{"POST", u + "/audit/merkle-verify", key, "", `{"index":-1,"leaf":"","path":[],"root":"","tree_size":0}`},
		{"POST", u + "/audit/merkle-verify", key, "", `{"proof":null}`},
		// Scheduled events and sagas, through the data plane as the operator.
		{"GET", "/_admin/scheduled", op, "", ``},
		{"GET", "/_admin/scheduled?status=pending&limit=1&offset=0", op, "", ``},
		{"GET", "/_admin/scheduled?status=nope&limit=-1", op, "", ``},
		{"GET", "/_admin/scheduled/dead_letters", op, "", ``},
		{"POST", "/_admin/scheduled/run_due", op, "", `{"now":4102444800000}`},
		{"POST", "/_admin/scheduled/run_due", op, "", `{"now":"soon"}`},
		{"DELETE", "/_admin/scheduled/00000000-0000-0000-0000-000000000000", op, "", ``},
		{"POST", "/_admin/scheduled/x/retry", op, "", ``},
		{"GET", "/_admin/scheduled", key, "", ``},
		{"GET", "/_admin/sagas", op, "", ``},
		{"GET", "/_admin/sagas?status=failed&limit=5&offset=x", op, "", ``},
		{"GET", "/_admin/sagas/nope", op, "", ``},
		{"POST", "/_admin/sagas/nope/retry", op, "", `{}`},
		// Operations: checkpoints, tombstones, audit and root anchors.
		{"GET", apiOpsPrefix + "/checkpoints", op, "", ``},
		{"POST", apiOpsPrefix + "/checkpoints", op, "", `{"aggregate_type":"user","aggregate_id":"` + apiUser + `"}`},
		{"POST", apiOpsPrefix + "/checkpoints", op, "", `{"aggregate_type":"user"}`},
		{"POST", apiOpsPrefix + "/checkpoints", op, "", `{"aggregate_type":"user","aggregate_id":""}`},
		{"POST", apiOpsPrefix + "/checkpoints/x/restore", op, "", `{}`},
		{"DELETE", apiOpsPrefix + "/checkpoints/x", op, "", ``},
		{"POST", apiOpsPrefix + "/tombstone/user/" + apiUser, op, "", `{"reason":"gdpr"}`},
		{"POST", apiOpsPrefix + "/tombstone/user/bad", op, "", `{"reason":5}`},
		{"GET", apiOpsPrefix + "/tombstones", op, "", ``},
		{"GET", apiOpsPrefix + "/tombstones/x", op, "", ``},
		{"DELETE", apiOpsPrefix + "/tombstones/x", op, "", ``},
		{"POST", apiOpsPrefix + "/tombstones/x/execute", op, "", `{}`},
		{"GET", apiOpsPrefix + "/audit/verify-chain/user/" + apiUser, op, "", ``},
		{"GET", apiOpsPrefix + "/audit/merkle-root/order/" + apiOrder, op, "", ``},
		{"GET", apiOpsPrefix + "/audit/merkle-proof/user/" + apiUser + "/1", op, "", ``},
		{"POST", apiOpsPrefix + "/audit/merkle-verify", op, "", `{"index":99,"leaf":"00","path":null,"root":"ff","tree_size":1,"aggregate_type":"user","aggregate_id":"` + apiUser + `"}`},
		{"GET", apiOpsPrefix + "/root-anchors", op, "", ``},
		{"POST", apiOpsPrefix + "/root-anchors", op, "", `{}`},
		{"GET", apiOpsPrefix + "/root-anchors/latest", op, "", ``},
		{"GET", apiOpsPrefix + "/root-anchors/x", op, "", ``},
		{"DELETE", apiOpsPrefix + "/root-anchors/x", op, "", ``},
		{"POST", apiOpsPrefix + "/root-anchors/x/verify", op, "", `{}`},
		{"GET", apiOpsPrefix + "/root-anchor-settings", op, "", ``},
		{"PUT", apiOpsPrefix + "/root-anchor-settings", op, "", `{"enabled":true,"interval":"1m"}`},
		{"PUT", apiOpsPrefix + "/root-anchor-settings", op, "", `{"enabled":"yes","interval":-1}`},
		{"GET", "/api/instances/myapp/ops/nope/checkpoints", op, "", ``},
		// The control plane and transport edges.
		{"POST", "/api/login", apiJSON, "", `{"email":"` + apiEmail + `","password":"pw"}`},
		{"POST", "/api/instances/myapp/spec", op, "", `{"environment":"prod","spec":{"spec":{"aggregate_types":[]}}}`},
		{"OPTIONS", u, apiAuthNone, "", ``},
		{"PATCH", u, key, "", `{}`},
	}
}

// FuzzAPIRequest sends arbitrary requests to the real handler chain serving the real engine.
// Property: no input makes a server error, every answer carries X-Request-Id, and every failure is
// the JSON error envelope.
func FuzzAPIRequest(f *testing.F) {
	for _, s := range apiSeeds() {
		f.Add(s.method, s.path, s.flags, s.idemKey, []byte(s.body))
	}
	parent := f.TempDir()
	var fx *apiFixture
	served := 0
	f.Cleanup(func() {
		if fx != nil {
			if err := fx.close(); err != nil {
				f.Error(err)
			}
		}
	})
	f.Fuzz(func(t *testing.T, method, path string, flags uint8, idemKey string, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || method == "" || strings.ContainsAny(method, " \r\n\t:/") ||
			strings.ContainsAny(idemKey, "\r\n\x00") {
			return
		}
		if fx == nil || served == apiRestartEvery {
			if fx != nil {
				if err := fx.close(); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if fx, err = apiStart(parent); err != nil {
				fx = nil
				t.Fatal(err)
			}
			served = 0
		}
		served++
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(res)
		req.SetRequestURI("http://j17" + path)
		req.Header.SetMethod(method)
		req.SetBody(body)
		apiHeaders(req, fx, flags, idemKey, body)
		if err := fx.client.DoTimeout(req, res, 10*time.Second); err != nil {
			return // the client refused to send it
		}
		status := res.StatusCode()
		if status >= 500 {
			t.Fatalf("%s %s (flags %#x, key %q, body %q): got %d: %s", method, path, flags, idemKey, body, status, res.Body())
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

// apiHeaders sets the credentials, Content-Type and idempotency key that flags choose.
func apiHeaders(req *fasthttp.Request, fx *apiFixture, flags uint8, idemKey string, body []byte) {
	switch flags & 3 {
	case apiAuthOperator:
		req.Header.Set("Authorization", "Bearer "+fx.token)
		req.Header.Set("X-J17-Instance", "myapp")
		req.Header.Set("X-J17-Environment", "staging")
	case apiAuthKey:
		req.Header.Set("Authorization", "Bearer "+fx.key)
	case apiAuthForged:
		req.Header.Set("Authorization", "Bearer j17_0_staging_"+string(body))
	}
	switch flags >> 2 & 3 {
	case 1:
		req.Header.SetContentType("application/json")
	case 2:
		req.Header.SetContentType("text/plain")
	case 3:
		req.Header.SetContentType("application/merge-patch+json; charset=utf-8")
	}
	if idemKey != "" {
		req.Header.Add("X-Idempotency-Key", idemKey)
		if flags&(1<<4) != 0 {
			req.Header.Add("X-Idempotency-Key", idemKey+"-other")
		}
	}
}
