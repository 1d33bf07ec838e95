package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"golang.org/x/crypto/bcrypt"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runServe runs serve in-process on a free loopback port and returns its base URL and a stop
// function that shuts it down and returns serve's error.
func runServe(t *testing.T, c serveConfig, out *syncBuffer) (string, func() error) {
	t.Helper()
	c.listen = "127.0.0.1:0"
	c.bcryptCost = bcrypt.MinCost
	if c.logFormat == "" {
		c.logFormat, c.logLevel = "text", "info"
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, c, control.SystemClock{}, out, func(a net.Addr) { addr <- a }) }()
	select {
	case a := <-addr:
		stopped := false
		stop := func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			return <-done
		}
		t.Cleanup(func() { _ = stop() })
		return "http://" + a.String(), stop
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, out.String())
	}
	return "", nil
}

func post(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// readBootstrap parses DATA/bootstrap.txt.
func readBootstrap(t *testing.T, path string) (email, password string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: got mode %v, want 0600", path, fi.Mode().Perm())
	}
	f, _ := os.Open(path)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "J17_ADMIN_EMAIL="); ok {
			email = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "J17_ADMIN_PASSWORD="); ok {
			password = v
		}
	}
	if email == "" || len(password) < 20 {
		t.Fatalf("%s: got email %q and a password of %d characters", path, email, len(password))
	}
	return email, password
}

func TestServeFirstStartBootstrap(t *testing.T) {
	dir := t.TempDir()
	out := &syncBuffer{}
	base, stop := runServe(t, serveConfig{data: dir, maxBody: 1 << 20}, out)

	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()

	path := filepath.Join(dir, "bootstrap.txt")
	email, password := readBootstrap(t, path)
	if email != "admin@localhost" {
		t.Errorf("bootstrap email: got %q, want admin@localhost", email)
	}
	for _, name := range []string{"jwt_secret", "node_secret", "control.db"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: got %v, %v; want mode 0600", name, fi, err)
		}
	}
	logs := out.String()
	if strings.Contains(logs, password) {
		t.Errorf("the password appears in the output:\n%s", logs)
	}
	for _, want := range []string{path, ". " + path, base + "/api/login", base + "/api/instances", "/spec", "/keys"} {
		if !strings.Contains(logs, want) {
			t.Errorf("output does not contain %q:\n%s", want, logs)
		}
	}
	if n := strings.Count(logs, "Next steps"); n != 1 {
		t.Errorf("next steps printed %d times, want once", n)
	}

	status, body := post(t, base+"/api/login", "", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
	if status != 200 || body["token"] == nil {
		t.Fatalf("login with the bootstrap credentials: %d %v", status, body)
	}
	token := body["token"].(string)
	if status, body := post(t, base+"/api/instances", token, `{"name":"myapp"}`); status != 201 {
		t.Fatalf("create instance: %d %v", status, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if !strings.Contains(out.String(), "msg=stopped") {
		t.Errorf("no stop message in the log:\n%s", out.String())
	}

	// A restart keeps the operator, the bootstrap file, the signing secret and the records.
	out2 := &syncBuffer{}
	base2, _ := runServe(t, serveConfig{data: dir, maxBody: 1 << 20}, out2)
	if e2, p2 := readBootstrap(t, path); e2 != email || p2 != password {
		t.Errorf("restart changed the bootstrap credentials")
	}
	if strings.Contains(out2.String(), "created the first operator") {
		t.Errorf("restart created another operator:\n%s", out2.String())
	}
	if status, body := post(t, base2+"/api/instances", token, `{"name":"myapp"}`); status != 409 {
		t.Errorf("token of the first run after restart: got %d %v, want 409 (name taken, token still valid)", status, body)
	}
}

func TestServeAdminFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	out := &syncBuffer{}
	base, _ := runServe(t, serveConfig{data: dir, maxBody: 1 << 20, adminEmail: "ops@example.com", adminPassword: "s3cret-pass"}, out)
	if _, err := os.Stat(filepath.Join(dir, "bootstrap.txt")); !os.IsNotExist(err) {
		t.Errorf("bootstrap.txt written although the password was given: %v", err)
	}
	if status, body := post(t, base+"/api/login", "", `{"email":"ops@example.com","password":"s3cret-pass"}`); status != 200 {
		t.Errorf("login: %d %v", status, body)
	}
	if strings.Contains(out.String(), "s3cret-pass") {
		t.Errorf("the password appears in the output")
	}
}

func TestServeRefusesASecondServerOnOneDataDirectory(t *testing.T) {
	dir := t.TempDir()
	runServe(t, serveConfig{data: dir, maxBody: 1 << 20}, &syncBuffer{})
	c := serveConfig{data: dir, listen: "127.0.0.1:0", maxBody: 1 << 20, logFormat: "text", logLevel: "info", bcryptCost: bcrypt.MinCost}
	err := serve(context.Background(), c, control.SystemClock{}, &syncBuffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("second server: got %v, want a locked store", err)
	}
}

// TestServeStopsOnSignals runs the command as a child process and stops it with each signal.
func TestServeStopsOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			out := &syncBuffer{}
			cmd := exec.Command(os.Args[0], "serve", "--data", dir, "--listen", addr, "--log-format", "json")
			cmd.Env = append(os.Environ(), "J17_TEST_RUN_MAIN=1")
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				res, err := http.Get("http://" + addr + "/healthz")
				if err == nil {
					res.Body.Close()
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("server did not come up:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), `"msg":"stopped"`) {
				t.Errorf("no stop message in the JSON log:\n%s", out.String())
			}
		})
	}
}

// TestServeNextStepsReachAFirstEvent runs, in a shell, the commands serve prints at first start,
// exactly as printed, and checks that they end with the first event's aggregate.
func TestServeNextStepsReachAFirstEvent(t *testing.T) {
	for _, tool := range []string{"sh", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the printed commands need %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	out := &syncBuffer{}
	runServe(t, serveConfig{data: dir, maxBody: 1 << 20}, out)
	logs := out.String()
	start := strings.Index(logs, "Next steps, in another terminal:")
	if start < 0 {
		t.Fatalf("no next steps in the output:\n%s", logs)
	}
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, line := range strings.Split(logs[start:], "\n")[1:] {
		if strings.HasPrefix(line, "time=") {
			break // the next log line ends the printed block
		}
		script.WriteString(strings.TrimPrefix(line, "  ") + "\n")
	}
	// The data directory is absolute here, so the printed path to bootstrap.txt works from anywhere.
	got, err := exec.Command("sh", "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("the printed commands failed: %v\n%s\nscript:\n%s", err, got, script.String())
	}
	if !strings.Contains(string(got), `"stream_id"`) || !strings.Contains(string(got), `"data":{"name":"Alice"`) || !strings.Contains(string(got), `"length":1`) {
		t.Fatalf("the printed commands did not write and read a first event:\n%s", got)
	}
}
