package bench

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/j17-go/j17/engine/ident"
)

// Event is one event to append: its type and its data as JSON.
type Event struct {
	Type string
	Data []byte
}

// Conn is one client connection to a system, used by one goroutine at a time.
type Conn interface {
	// Append writes events to one stream atomically. expected is the stream's length before the
	// write, checked inside the commit; a negative expected skips the check. A refused check is
	// ErrConflict.
	Append(typ, id string, events []Event, expected int) error
	// PlaceOrder writes an order event that fans out to one inventory stream per sku, all in one
	// atomic write: j17's map implication, or the peer's explicit equivalent.
	PlaceOrder(orderID string, skus []string) error
	// Read fetches an aggregate; cached=false bypasses any cache.
	Read(typ, id string, cached bool) error
	// Length returns a stream's length.
	Length(typ, id string) (int, error)
	// List lists up to limit aggregate ids of a type.
	List(typ string, limit int) error
	Close() error
}

// System is one server under test, started and stopped by the suite.
type System interface {
	Name() string
	// Start starts the server on a fresh data directory and prepares it for the scenarios.
	Start(ctx context.Context) error
	Dial() (Conn, error)
	// PIDs are the server's processes, for CPU and memory.
	PIDs() []int
	// DataDir holds everything the server writes.
	DataDir() string
	// Crash stops the server without letting it flush or shut down cleanly.
	Crash() error
	// Restart starts the server on its existing data and returns the time from exec to the
	// first successful request.
	Restart(ctx context.Context) (time.Duration, error)
	// Stop shuts the server down and removes nothing.
	Stop() error
	// HasCache says whether the server keeps a read cache that Read(cached=false) bypasses.
	HasCache() bool
}

// resetter is a System that can drop everything it holds. Redis keeps every stream in memory, at
// about 4 KB for a stream of one event, and the write scenarios (and redis-benchmark beside them)
// create a new stream per request: kept across scenarios, they fill the machine's memory within a
// few scenarios. The suite empties such a peer after each of those scenarios, while j17 and
// PostgreSQL keep all they were given; the later scenarios then find the peer smaller than j17.
type resetter interface {
	Reset() error
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// NewID returns a random lowercase UUID v4, the identifier every scenario uses.
func NewID() string { return ident.NewV4() }

// waitReady polls ready every millisecond until it succeeds or ctx ends.
func waitReady(ctx context.Context, ready func() error) error {
	var err error
	for {
		if err = ready(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(time.Millisecond):
		}
	}
}

// process is a child process with its log file.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProcess(logPath string, cred *syscall.Credential, env []string, name string, args ...string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	// Its own process group keeps a terminal's Ctrl-C from reaching the server before the suite
	// has stopped it; the parent-death signal ends it if the suite itself is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// signal sends sig to the process and waits up to timeout for it to exit, then kills it.
func (p *process) signal(sig syscall.Signal, timeout time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
