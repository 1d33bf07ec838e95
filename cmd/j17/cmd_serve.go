package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/j17-go/j17/api"
	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/implication"
)

// shutdownGrace bounds how long a shutdown waits for requests in flight.
const shutdownGrace = 30 * time.Second

// autoAnchorPeriod is how often the server checks whether an automatic root anchor is due; the
// smallest interval an environment may set is one minute.
const autoAnchorPeriod = time.Minute

// defaultGCPercent is the garbage collector's target when GOGC is not set. The server's live heap
// is small (the index and the log are memory-mapped files, not heap), so at Go's default of 100
// the collector runs very often under write load; at 200 a write costs about a tenth less CPU
// for a heap that peaks at three times the live data instead of two.
const defaultGCPercent = 200

// applyGCDefault sets defaultGCPercent unless the environment sets GOGC.
func applyGCDefault(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// spareProcs is how many Go processors the server runs beyond the runtime's default of one per
// core, unless the environment sets GOMAXPROCS. With every processor busy, a goroutine made
// runnable waits in the run queue for the scheduler's 10 ms slices, and the store's pipeline is
// goroutines that wake often and hold others up while they wait: the log's flusher returning from
// fdatasync to acknowledge the flushed group (the publisher did that when these figures were
// taken), the indexer inside bbolt's transaction commit (bursts of hundreds of milliseconds that
// cannot yield). With spare processors the kernel, which runs a thread woken from I/O promptly,
// shares the cores among them instead. On 2 cores, in alternated runs of bench/cmd/loadgen: one
// spare took 64 connections writing to fresh aggregates about 5% higher than none (ten 15-second
// runs each); two spares took orders of ten items from 7,681 to 8,746/s and over the catalog from
// 7,026 to 7,886/s against one (three pairs of 8-second runs, every run with two above every run
// with one), while single writes at 1, 16, 64 and 256 connections, batches, OCC contention, reads
// and the mixed load stayed within the runs' spread (two or three pairs each). Six spares (eight
// processors on 2 cores) took orders to new streams from 8,353 to 9,482/s against two (four pairs,
// every run with six above the run with two beside it), and in two pairs each single writes at 64
// connections from 30,584 to 34,413/s, the mixed load from 32,150 to 35,259/s and single writes at
// 1 connection from 4,623 to 5,018/s; orders over the catalog (9,358 against 9,449/s in eight
// pairs), single writes at 16 connections and batches (four pairs each) stayed within the runs'
// spread. Sixteen processors did worse than eight (three pairs).
//
// The spares cost tail latency while collections marked for long. A garbage collection runs
// dedicated mark workers on a quarter of the processors and idle ones on every other processor
// without work, so with eight processors on 2 cores it takes both cores from the requests while it
// marks. When the record cache held every committed record, marks took 30-50 ms, and processors
// equal to the cores took the open-loop p99 of single writes at 16 connections from 48 to 20 ms
// (medians of five alternated pairs) and orders to new streams down by about a tenth (three pairs).
// Since only reads fill that cache, marks are short: processors equal to the cores gave that p99 as
// 11.1 and 4.6 ms against 5.1 and 4.6 ms, with 5-7% fewer writes (two pairs). So the spares stay.
const spareProcs = 6

// applyProcsDefault runs spareProcs more Go processors than the runtime's default unless the
// environment sets GOMAXPROCS.
func applyProcsDefault(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + spareProcs)
	}
}

// cmdServe runs `j17 serve` until SIGINT or SIGTERM.
func cmdServe(args []string, _, stderr io.Writer) int {
	c, err := parseServeConfig(args, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "j17 serve: %v\n", err)
		return 2
	}
	applyGCDefault(os.Getenv)
	applyProcsDefault(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = withCPUProfile(c.cpuProfile, func() error { return serve(ctx, c, control.SystemClock{}, stderr, nil) })
	if err != nil {
		fmt.Fprintf(stderr, "j17 serve: %v\n", err)
		return 1
	}
	return 0
}

// withCPUProfile runs run with the process's CPU profile going to path, when path is set, and
// ends the profile once run returns, after the server's shutdown: a profile of a load run against
// bin/j17 as it ships, with no rebuild and no profiling endpoint to guard.
func withCPUProfile(path string, run func() error) error {
	if path == "" {
		return run()
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	runErr := run()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil && runErr == nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	return runErr
}

// serve runs the server until ctx ends, then shuts it down gracefully: it stops accepting
// connections, lets the requests in flight finish (up to shutdownGrace), and closes the stores.
// ready, when not nil, is called with the listening address once requests are accepted.
func serve(ctx context.Context, c serveConfig, clock control.Clock, stderr io.Writer, ready func(net.Addr)) error {
	log := newLogger(c, stderr)
	if err := os.MkdirAll(c.data, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	secret, err := loadOrCreateSecret(filepath.Join(c.data, "jwt_secret"))
	if err != nil {
		return err
	}
	nodeSecret, err := loadOrCreateSecret(filepath.Join(c.data, "node_secret"))
	if err != nil {
		return err
	}
	store, err := control.Open(filepath.Join(c.data, "control.db"), control.Options{Clock: clock, BcryptCost: c.bcryptCost})
	if err != nil {
		return err
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("closing the control store", "err", err)
		}
	}()
	boot, err := bootstrap(store, c, log)
	if err != nil {
		return err
	}
	eng, err := engine.New(engine.Options{
		DataDir: c.data, Control: store, Clock: clock, Logger: log,
		CacheBytes: cacheBudget(c.cacheBytes), SnapshotEvery: uint64(c.snapshotEvery),
		AfterCommit:   crashHook(c.crashAfterCommit),
		Implications:  implication.Limits{MaxDepth: c.maxDepth, MaxTotal: c.maxTotal},
		SchedulerPoll: c.schedulerPoll,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := eng.Close(); err != nil {
			log.Error("closing the event stores", "err", err)
		}
	}()
	// Automatic root anchors follow each environment's anchor settings; the goroutine ends before
	// the engine closes.
	anchorCtx, stopAnchors := context.WithCancel(ctx)
	anchorsDone := make(chan struct{})
	go func() { eng.RunAutoAnchors(anchorCtx, autoAnchorPeriod); close(anchorsDone) }()
	defer func() { stopAnchors(); <-anchorsDone }()
	srv, err := api.New(api.Options{
		Engine: eng, Control: store, JWTSecret: secret, NodeSecret: []byte(hex.EncodeToString(nodeSecret)), DataDir: c.data, Clock: clock, Logger: log,
		RateLimitKey: c.rateLimitKey, RateLimitIP: c.rateLimitIP, MaxBody: c.maxBody, BaseDomain: c.baseDomain,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "data", c.data)
	printNextSteps(stderr, "http://"+ln.Addr().String(), boot)
	if ready != nil {
		ready(ln.Addr())
	}

	select {
	case err := <-served:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown did not finish cleanly", "err", err)
	}
	if err := <-served; err != nil {
		log.Error("server", "err", err)
	}
	log.Info("stopped")
	return nil
}

// crashAfterCommitEnv, set to "1", makes the server kill itself with SIGKILL right after its first
// write commit and before the answer: crash tests use it to prove that an acknowledged-or-not
// write with an idempotency key is never written twice. It is read only here.
const crashAfterCommitEnv = "J17_TEST_CRASH_AFTER_COMMIT"

func crashHook(on bool) func() {
	if !on {
		return nil
	}
	return func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
}

// cacheBudget maps the --cache-bytes setting, where 0 means off, to the engine's option, where
// 0 means the default and a negative budget means off.
func cacheBudget(n int) int64 {
	if n == 0 {
		return -1
	}
	return int64(n)
}

// printNextSteps tells a newcomer, once per start, the commands that lead to a first key.
func printNextSteps(w io.Writer, base string, boot bootstrapResult) {
	login := "  # 1. Log in with the operator account\n"
	creds := `\"$J17_ADMIN_EMAIL\"`
	pass := `\"$J17_ADMIN_PASSWORD\"`
	if boot.credentialsFile != "" {
		file := shellPath(boot.credentialsFile)
		login = fmt.Sprintf("  # 1. Log in (the operator email and password are in %s)\n  . %s\n", file, file)
	} else {
		login += "  #    (J17_ADMIN_EMAIL and J17_ADMIN_PASSWORD as at first start)\n"
	}
	auth := `-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json'`
	fmt.Fprintf(w, `
j17 is ready at %[1]s

Next steps, in another terminal:

%[2]s  TOKEN=$(curl -s %[1]s/api/login -H 'Content-Type: application/json' \
    -d "{\"email\":%[3]s,\"password\":%[4]s}" | sed -E 's/.*"token":"([^"]+)".*/\1/')

  # 2. Create an instance
  curl -s %[1]s/api/instances %[5]s -d '{"name":"myapp"}'

  # 3. Deploy a spec to staging
  curl -s %[1]s/api/instances/myapp/spec %[5]s \
    -d '{"environment":"staging","spec":{"aggregate_types":{"user":{"events":{"was_created":{"schema":{"type":"object"},"handler":[{"set":{"target":"","value":"$.data"}}]}}}},"agent_types":["user"]}}'

  # 4. Create a write key for staging (the key is shown once)
  J17_API_KEY=$(curl -s %[1]s/api/instances/myapp/keys %[5]s \
    -d '{"name":"backend","scope":"write","environment":"staging"}' | sed -E 's/.*"key":"([^"]+)".*/\1/')

  # 5. Write a first event, then read the aggregate it built
  curl -s -X POST %[1]s/user/550e8400-e29b-41d4-a716-446655440000/was_created \
    -H "Authorization: Bearer $J17_API_KEY" -H 'Content-Type: application/json' \
    -d '{"data":{"name":"Alice"},"metadata":{"actor":{"type":"user","id":"550e8400-e29b-41d4-a716-446655440001"}}}'
  curl -s %[1]s/user/550e8400-e29b-41d4-a716-446655440000 -H "Authorization: Bearer $J17_API_KEY"

`, base, login, creds, pass, auth)
}

// shellPath writes a relative path as ./path, so that the shell's "." reads the file rather than
// searching PATH for it.
func shellPath(p string) string {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return p
	}
	return "./" + p
}
