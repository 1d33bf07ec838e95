package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// crashChild is the j17 command run as a child process on a free loopback port.
type crashChild struct {
	cmd  *exec.Cmd
	base string
	out  *syncBuffer
}

func startChild(t *testing.T, dir string, env ...string) *crashChild {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := &syncBuffer{}
	cmd := exec.Command(os.Args[0], "serve", "--data", dir, "--listen", addr)
	cmd.Env = append(append(os.Environ(), "J17_TEST_RUN_MAIN=1", "J17_ADMIN_EMAIL=ops@example.com", "J17_ADMIN_PASSWORD=crash-test-pass"), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &crashChild{cmd: cmd, base: "http://" + addr, out: out}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(c.base + "/healthz")
		if err == nil {
			res.Body.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *crashChild) call(t *testing.T, method, path, auth, body string, headers ...string) (*http.Response, map[string]any, error) {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res, out, nil
}

func (c *crashChild) must(t *testing.T, status int, method, path, auth, body string, headers ...string) map[string]any {
	t.Helper()
	res, out, err := c.call(t, method, path, auth, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if res.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %v", method, path, res.StatusCode, status, out)
	}
	return out
}

// TestIdempotentWriteSurvivesACrashAfterCommit kills the server with SIGKILL after a keyed write
// is committed and before it is answered; the client's retry after the restart is a replay, and
// the event exists once.
func TestIdempotentWriteSurvivesACrashAfterCommit(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir, crashAfterCommitEnv+"=1")
	token := c.must(t, 200, "POST", "/api/login", "", `{"email":"ops@example.com","password":"crash-test-pass"}`)["token"].(string)
	c.must(t, 201, "POST", "/api/instances", token, `{"name":"crash"}`)
	c.must(t, 200, "POST", "/api/instances/crash/spec", token,
		`{"environment":"staging","spec":{"agent_types":["user"],"aggregate_types":{"note":{"events":{"was_written":{"schema":{"type":"object"},"handler":[{"set":{"target":"","value":"$.data"}}]}}}}}}`)
	key := c.must(t, 201, "POST", "/api/instances/crash/keys", token, `{"name":"w","scope":"write","environment":"staging"}`)["key"].(string)

	path := "/note/a0000000-0000-4000-a000-000000000001/was_written"
	body := `{"data":{"text":"once"},"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}}`
	if res, out, err := c.call(t, "POST", path, key, body, "X-Idempotency-Key", "crash-1"); err == nil {
		t.Fatalf("the write was answered (%d %v) although the server was to die before answering", res.StatusCode, out)
	}
	if err := c.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v, want killed\n%s", err, c.out.String())
	}

	c2 := startChild(t, dir)
	res, out, err := c2.call(t, "POST", path, key, body, "X-Idempotency-Key", "crash-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 201 || res.Header.Get("X-Idempotency-Replayed") != "true" {
		t.Fatalf("retry after the crash: %d %v (replayed %q), want a 201 replay", res.StatusCode, out, res.Header.Get("X-Idempotency-Replayed"))
	}
	n := c2.must(t, 200, "GET", "/note/a0000000-0000-4000-a000-000000000001/length", key, "")["length"]
	if n != 1.0 {
		t.Fatalf("length after the retry = %v, want 1", n)
	}
}
