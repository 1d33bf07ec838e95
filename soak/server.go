package soak

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The operator the server creates at its first start.
const (
	adminEmail    = "soak@example.com"
	adminPassword = "soak-password-0123456789"
)

// server is one j17 process at a time over one data directory, with its output appended to a
// log file.
type server struct {
	bin, data, logPath string
	cmd                *exec.Cmd
	done               chan struct{}
	// base is "http://127.0.0.1:port" while a process runs; workers read it.
	base atomic.Pointer[string]
}

var healthClient = &http.Client{Timeout: time.Second}

// start runs the binary on a free loopback port, rate limits off, and waits for GET /healthz.
func (s *server) start() error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "serve", "--data", s.data, "--listen", addr, "--rate-limit-key", "0", "--rate-limit-ip", "0", "--log-level", "warn")
	cmd.Env = append(cleanEnv(), "J17_ADMIN_EMAIL="+adminEmail, "J17_ADMIN_PASSWORD="+adminPassword)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: start %s: %v", ErrServer, s.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("%w: j17 serve exited before it was ready (log: %s)", ErrServer, s.logPath)
		default:
		}
		if resp, err := healthClient.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.base.Store(&base)
				return nil
			}
		}
	}
	s.kill()
	return fmt.Errorf("%w: j17 serve did not answer GET /healthz within 30s (log: %s)", ErrServer, s.logPath)
}

// url is the running process's base URL, "" when none runs.
func (s *server) url() string {
	if p := s.base.Load(); p != nil {
		return *p
	}
	return ""
}

// kill sends SIGKILL and waits for the process to exit: a crash.
func (s *server) kill() { s.signal(syscall.SIGKILL, 0) }

// stop sends SIGTERM, then SIGKILL after 30 s, and waits for the process to exit.
func (s *server) stop() { s.signal(syscall.SIGTERM, 30*time.Second) }

func (s *server) signal(sig syscall.Signal, grace time.Duration) {
	if s.cmd == nil {
		return
	}
	empty := ""
	s.base.Store(&empty)
	_ = s.cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-s.done:
		case <-time.After(grace):
			_ = s.cmd.Process.Kill()
		}
	}
	<-s.done
	s.cmd = nil
}

// verify runs `j17 verify` on the data directory; the server must be down.
func (s *server) verify() error {
	out, err := exec.Command(s.bin, "verify", s.data).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: j17 verify %s: %v\n%s", ErrChain, s.data, err, out)
	}
	return nil
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

// cleanEnv is the environment without J17_ variables, so that the caller's settings cannot
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
