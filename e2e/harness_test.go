package e2e

import (
	"bytes"
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
)

const (
	adminEmail    = "e2e-admin@example.com"
	adminPassword = "e2e-password-0123456789"
	// baseDomain turns on host routing, so that the wrong-environment error can be reached.
	baseDomain = "j17.test"
	// instanceName is the instance every server of the suite gets.
	instanceName = "e2e"
)

// binPath is the j17 binary built once by TestMain.
var binPath string

// environments are the three environments of every instance (CONTRACT.md).
var environments = []string{"prod", "staging", "test"}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "j17-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "j17")
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/j17")...)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/j17: %v\n%s", err, out)
		return 1
	}
	code := m.Run()
	shared.stop()
	if shared.srv != nil {
		if race := raceReport(shared.srv.logs()); race != "" {
			fmt.Fprintf(os.Stderr, "e2e: the shared server reported a data race:\n%s\n", race)
			code = 1
		}
	}
	for _, d := range sharedDirs {
		os.RemoveAll(d)
	}
	return code
}

// server is one j17 child process and the data directory it keeps across restarts.
type server struct {
	dataDir string
	extra   []string

	// mu protects the running process's fields below; restart replaces them all at once.
	mu   sync.Mutex
	cmd  *exec.Cmd     // nil once stopped
	done chan struct{} // closed when cmd has exited
	log  *lockedWriter // the process's stdout and stderr
	base string        // "http://127.0.0.1:port"
}

// serverOptions vary a server's flags.
type serverOptions struct {
	// rateLimitKey and rateLimitIP are requests per minute per API key and per client IP;
	// 0 turns limiting off.
	rateLimitKey, rateLimitIP int
}

// newServer starts a server with a fresh data directory and stops it when t ends.
func newServer(t testing.TB, o serverOptions) *server {
	t.Helper()
	s := &server{dataDir: t.TempDir(), extra: []string{
		"--rate-limit-key", fmt.Sprint(o.rateLimitKey), "--rate-limit-ip", fmt.Sprint(o.rateLimitIP),
		"--base-domain", baseDomain,
	}}
	t.Cleanup(func() {
		s.stop()
		if race := raceReport(s.logs()); race != "" {
			t.Errorf("the server reported a data race:\n%s", race)
		}
	})
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// sourcesOnce opens the server's sources once per run of the suite.
var sourcesOnce sync.Once

// openServerSources opens every non-test Go file of the module outside e2e, and go.mod and
// go.sum. go test replays a package's last result while the files of the module that its tests
// opened are unchanged, and the binary TestMain builds is out of that record: without this, a
// change to the server alone would replay e2e's last result instead of testing the new binary.
func openServerSources() {
	_ = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && (d.Name() == "e2e" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "..":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") || name == "go.mod" || name == "go.sum" {
			if f, err := os.Open(path); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// freeAddr asks the kernel for a free loopback port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs the binary on a free port and waits until GET /healthz answers 200.
func (s *server) start() error {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if last = s.startOnce(); last == nil {
			return nil
		}
	}
	return last
}

func (s *server) startOnce() error {
	sourcesOnce.Do(openServerSources)
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	cmd := exec.Command(binPath, append([]string{"serve", "--data", s.dataDir, "--listen", addr}, s.extra...)...)
	cmd.Env = append(cleanEnv(), "J17_ADMIN_EMAIL="+adminEmail, "J17_ADMIN_PASSWORD="+adminPassword)
	log := &lockedWriter{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log, s.base = cmd, done, log, "http://"+addr
	s.mu.Unlock()

	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("j17 serve exited before it was ready:\n%s", s.logs())
		default:
		}
		resp, err := healthClient.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("j17 serve did not answer GET /healthz within 15s:\n%s", s.logs())
}

var healthClient = &http.Client{Timeout: time.Second}

// cleanEnv is the environment without J17_ variables, so that the developer's settings cannot
// change the server under test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "J17_") {
			env = append(env, kv)
		}
	}
	return env
}

// url is the base URL of the running process.
func (s *server) url() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// stop sends SIGTERM, then SIGKILL after 10 s, and waits for the process to exit.
func (s *server) stop() {
	if s == nil {
		return
	}
	s.signal(syscall.SIGTERM, 10*time.Second)
}

// kill sends SIGKILL and waits for the process to exit: a crash.
func (s *server) kill() {
	s.signal(syscall.SIGKILL, 0)
}

func (s *server) signal(sig syscall.Signal, grace time.Duration) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-done:
			return
		case <-time.After(grace):
			_ = cmd.Process.Kill()
		}
	}
	<-done
}

// restart stops the server gracefully and starts it again on the same data directory.
func (s *server) restart(t testing.TB) {
	t.Helper()
	s.stop()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// crashRestart kills the server with SIGKILL and starts it again on the same data directory.
func (s *server) crashRestart(t testing.TB) {
	t.Helper()
	s.kill()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// lockedWriter serializes the child's stdout and stderr into one buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// raceReport returns the first data race report in a server's log, or "".
func raceReport(log string) string {
	i := strings.Index(log, "WARNING: DATA RACE")
	if i < 0 {
		return ""
	}
	end := strings.Index(log[i:], "==================")
	if end < 0 {
		end = len(log) - i
	}
	return log[i : i+end]
}
