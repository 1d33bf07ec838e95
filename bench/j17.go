package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// benchSpec is the spec every scenario runs against: items with two event types, orders whose
// placement fans out with a map implication to one inventory stream per item.
const benchSpec = `{
  "aggregate_types": {
    "item": {"events": {
      "was_created": {"schema": {"type": "object"}, "handler": [{"set": {"target": "", "value": "$.data"}}]},
      "had_note_added": {"schema": {"type": "object"}, "handler": [
        {"set": {"target": "last", "value": "$.data"}},
        {"increment": {"target": "notes", "value": 1}}]}
    }},
    "order": {"events": {
      "was_placed": {"schema": {"type": "object"}, "handler": [{"set": {"target": "", "value": "$.data"}}],
        "implications": [{"map": {"in": "$.data.items", "as": "$item", "emit": {
          "aggregate_type": "inventory", "id": "$item.sku", "event_type": "had_reservation_requested",
          "data": {"quantity": "$item.qty"}}}}]}
    }},
    "inventory": {"events": {
      "had_reservation_requested": {"schema": {"type": "object"}, "handler": [{"increment": {"target": "reserved", "value": "$.data.quantity"}}]}
    }}
  },
  "agent_types": ["user"]
}`

const (
	benchEmail    = "bench@localhost"
	benchPassword = "bench-password-0123456789"
)

// J17 is our server, run from its binary.
type J17 struct {
	Bin  string
	Dir  string
	addr string
	proc *process
	key  string
	hc   *fasthttp.HostClient
}

func (j *J17) Name() string    { return "j17" }
func (j *J17) DataDir() string { return filepath.Join(j.Dir, "data") }
func (j *J17) HasCache() bool  { return true }
func (j *J17) Addr() string    { return j.addr }
func (j *J17) PIDs() []int     { return processTree(j.proc.cmd.Process.Pid) }
func (j *J17) Dial() (Conn, error) {
	return &j17Conn{j: j, http: newHTTPConn(j.addr), actor: NewID()}, nil
}

func (j *J17) Start(ctx context.Context) error {
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	j.addr = "127.0.0.1:" + strconv.Itoa(port)
	j.hc = &fasthttp.HostClient{Addr: j.addr, MaxConns: 1024, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	if _, err := j.exec(ctx); err != nil {
		return err
	}
	return j.setup()
}

// exec starts the binary and waits until it answers. Once the suite holds a key, that means a
// data-plane request: j17 answers /healthz before it has opened the event stores (recovery of
// the log, catch-up of the index), and a startup time that stopped there would not include them.
func (j *J17) exec(ctx context.Context) (time.Duration, error) {
	t := time.Now()
	p, err := startProcess(filepath.Join(j.Dir, "j17.log"), nil,
		[]string{"J17_ADMIN_EMAIL=" + benchEmail, "J17_ADMIN_PASSWORD=" + benchPassword},
		j.Bin, "serve", "--data", j.DataDir(), "--listen", j.addr, "--rate-limit-key", "0", "--rate-limit-ip", "0", "--log-level", "warn")
	if err != nil {
		return 0, fmt.Errorf("j17: %w", err)
	}
	j.proc = p
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	err = waitReady(ctx, func() error {
		if p.exited() {
			return fmt.Errorf("j17 exited; see %s", filepath.Join(j.Dir, "j17.log"))
		}
		path, key := "/healthz", ""
		if j.key != "" {
			path, key = "/item?limit=1", j.key
		}
		status, _, err := j.do("GET", path, key, nil)
		if err == nil && status != 200 {
			err = fmt.Errorf("%s answered %d", path, status)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("j17: %w", err)
	}
	return time.Since(t), nil
}

// setup logs in, creates the instance, deploys the spec to test and creates a write key.
func (j *J17) setup() error {
	var login struct{ Token string }
	if err := j.control("/api/login", "", map[string]any{"email": benchEmail, "password": benchPassword}, &login); err != nil {
		return err
	}
	var inst struct{ ID string }
	if err := j.control("/api/instances", login.Token, map[string]any{"name": "bench"}, &inst); err != nil {
		return err
	}
	spec := map[string]any{"environment": "test", "spec": json.RawMessage(benchSpec)}
	if err := j.control("/api/instances/"+inst.ID+"/spec", login.Token, spec, nil); err != nil {
		return err
	}
	var key struct{ Key string }
	if err := j.control("/api/instances/"+inst.ID+"/keys", login.Token,
		map[string]any{"name": "bench", "scope": "write", "environment": "test"}, &key); err != nil {
		return err
	}
	j.key = key.Key
	return nil
}

func (j *J17) control(path, token string, body, out any) error {
	b, _ := json.Marshal(body)
	status, resp, err := j.do("POST", path, token, b)
	if err != nil {
		return fmt.Errorf("j17 %s: %w", path, err)
	}
	if status/100 != 2 {
		return fmt.Errorf("j17 %s: HTTP %d: %s", path, status, resp)
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			return fmt.Errorf("j17 %s: %w", path, err)
		}
	}
	return nil
}

// do sends one request and returns the status and a copy of the body.
func (j *J17) do(method, path, token string, body []byte) (int, []byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + j.addr + path)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if err := j.hc.Do(req, resp); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode(), bytes.Clone(resp.Body()), nil
}

func (j *J17) Crash() error {
	j.proc.signal(syscall.SIGKILL, 10*time.Second)
	j.hc.CloseIdleConnections()
	return nil
}

func (j *J17) Restart(ctx context.Context) (time.Duration, error) { return j.exec(ctx) }

func (j *J17) Stop() error {
	j.proc.signal(syscall.SIGTERM, 30*time.Second)
	if j.hc != nil {
		j.hc.CloseIdleConnections()
	}
	return nil
}

// j17Conn is one load-generator connection, with its own socket.
type j17Conn struct {
	j     *J17
	http  *httpConn
	actor string
	buf   []byte
}

// healthz is the trivial request that shows the load generator's own ceiling.
func (c *j17Conn) healthz() error {
	status, body, err := c.http.do("GET", "/healthz", "", nil)
	return expectStatus(status, body, err, 200)
}

func expectStatus(status int, body []byte, err error, want ...int) error {
	if err != nil {
		return err
	}
	for _, w := range want {
		if status == w {
			return nil
		}
	}
	if status == fasthttp.StatusConflict {
		return ErrConflict
	}
	return fmt.Errorf("HTTP %d: %s", status, body)
}

// metadata appends the write metadata, with previous_length when expected is not negative.
func (c *j17Conn) metadata(b []byte, expected int) []byte {
	b = append(b, `"metadata":{"actor":{"type":"user","id":"`...)
	b = append(b, c.actor...)
	b = append(b, `"}`...)
	if expected >= 0 {
		b = append(b, `,"previous_length":`...)
		b = strconv.AppendInt(b, int64(expected), 10)
	}
	return append(b, "}}"...)
}

func (c *j17Conn) Append(typ, id string, events []Event, expected int) error {
	b := c.buf[:0]
	path := "/" + typ + "/" + id
	if len(events) == 1 {
		path += "/" + events[0].Type
		b = append(b, `{"data":`...)
		b = append(b, events[0].Data...)
		b = append(b, ',')
	} else {
		b = append(b, `{"events":[`...)
		for i, e := range events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"`...)
			b = append(b, e.Type...)
			b = append(b, `","data":`...)
			b = append(b, e.Data...)
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	b = c.metadata(b, expected)
	c.buf = b
	status, body, err := c.http.do("POST", path, c.j.key, b)
	return expectStatus(status, body, err, 200, 201)
}

func (c *j17Conn) PlaceOrder(orderID string, skus []string) error {
	b := append(c.buf[:0], `{"data":{"items":[`...)
	for i, s := range skus {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"sku":"`...)
		b = append(b, s...)
		b = append(b, `","qty":1}`...)
	}
	b = c.metadata(append(b, "]},"...), -1)
	c.buf = b
	status, body, err := c.http.do("POST", "/order/"+orderID+"/was_placed", c.j.key, b)
	return expectStatus(status, body, err, 200, 201)
}

func (c *j17Conn) Read(typ, id string, cached bool) error {
	path := "/" + typ + "/" + id
	if !cached {
		path += "?synchronous=true"
	}
	status, body, err := c.http.do("GET", path, c.j.key, nil)
	return expectStatus(status, body, err, 200)
}

func (c *j17Conn) Length(typ, id string) (int, error) {
	status, body, err := c.http.do("GET", "/"+typ+"/"+id+"/length", c.j.key, nil)
	if err := expectStatus(status, body, err, 200); err != nil {
		return 0, err
	}
	var l struct{ Length int }
	if err := json.Unmarshal(body, &l); err != nil {
		return 0, fmt.Errorf("length answer %s: %w", body, err)
	}
	return l.Length, nil
}

func (c *j17Conn) List(typ string, limit int) error {
	status, body, err := c.http.do("GET", "/"+typ+"?limit="+strconv.Itoa(limit), c.j.key, nil)
	return expectStatus(status, body, err, 200)
}

func (c *j17Conn) Close() error { return c.http.Close() }
