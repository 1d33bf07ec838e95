package soak

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

//go:embed spec.json
var specJSON []byte

// Config configures a soak run.
type Config struct {
	// J17 is the path of the binary under test; required.
	J17 string
	// Duration is how long the workers run.
	Duration time.Duration
	// KillEvery is the period of the SIGKILL restarts; 0 means none.
	KillEvery time.Duration
	// Workers is the number of concurrent clients; 0 means 8.
	Workers int
	// Rate bounds the operations per second of all workers together, so that a long run keeps
	// its data, and the read-back of each check, to a size that fits; 0 means no bound.
	Rate int
	// Seed makes the operation mix and the ids reproducible.
	Seed uint64
	// Out receives the progress lines and the totals.
	Out io.Writer
}

// Totals are the counts of a run.
type Totals struct {
	Writes, Events, Batches, Idempotent, Orders, Reads, Unavailable, Conflicts int64
	// Scheduling are the writes that scheduled an event, Sagas those that started a saga, and
	// Charges the events a saga awaited.
	Scheduling, Sagas, Charges                      int64
	Restarts, Checks, StreamChecks, OfflineVerifies int
	// Dir is the run's directory, kept when the run failed.
	Dir string
}

func (t Totals) String() string {
	return fmt.Sprintf("writes acked %d (%d events: %d batches, %d idempotent, %d implying, %d scheduling, %d starting a saga, %d awaited by one), "+
		"reads %d, requests without answer %d, 409 conflicts %d, restarts %d, checks %d (%d streams read back and chain-verified), j17 verify runs %d",
		t.Writes, t.Events, t.Batches, t.Idempotent, t.Orders, t.Scheduling, t.Sagas, t.Charges,
		t.Reads, t.Unavailable, t.Conflicts, t.Restarts, t.Checks, t.StreamChecks, t.OfflineVerifies)
}

// progressEvery is the period of the progress lines.
const progressEvery = 10 * time.Second

// Number of distinct streams the workers write to: bounded, so each check reads back a bounded
// set of streams however long the run.
const (
	userPool  = 48
	orderPool = 16
)

// Run runs one soak and stops everything it started before it returns, also when ctx ends (the
// error is then ctx's). Its temporary directory is removed unless the run failed.
func Run(ctx context.Context, c Config) (t Totals, err error) {
	if c.J17 == "" || c.Duration <= 0 {
		return t, errors.New("soak: Config.J17 and a positive Config.Duration are required")
	}
	if c.Workers <= 0 {
		c.Workers = 8
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	dir, err := os.MkdirTemp("", "j17-soak-")
	if err != nil {
		return t, err
	}
	t.Dir = dir
	srv := &server{bin: c.J17, data: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "j17.log")}
	defer func() {
		srv.kill()
		if err == nil || errors.Is(err, context.Canceled) {
			_ = os.RemoveAll(dir)
			t.Dir = ""
		}
	}()
	if err := srv.start(); err != nil {
		return t, err
	}
	cl := newClient(srv, c.Workers)
	key, op, err := setUp(cl)
	if err != nil {
		return t, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 17))
	w := &workload{c: cl, key: key, op: op, ledger: NewLedger(), count: &counters{}, bad: &statusLog{}}
	for range userPool {
		w.users = append(w.users, newUUID(rng))
	}
	for range orderPool {
		w.orders = append(w.orders, newUUID(rng))
	}
	var interval time.Duration
	if c.Rate > 0 {
		interval = time.Duration(c.Workers) * time.Second / time.Duration(c.Rate)
	}
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range c.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.worker(wctx, i, rand.New(rand.NewPCG(c.Seed, uint64(i))), interval) }()
	}
	stop := func() {
		stopWorkers()
		wg.Wait()
		t.Writes, t.Events, t.Batches = w.count.writes.Load(), w.count.events.Load(), w.count.batches.Load()
		t.Idempotent, t.Orders, t.Reads, t.Unavailable = w.count.idempotent.Load(), w.count.orders.Load(), w.count.reads.Load(), w.count.unavailable.Load()
		t.Conflicts = w.count.conflicts.Load()
		t.Scheduling, t.Sagas, t.Charges = w.count.scheduling.Load(), w.count.sagas.Load(), w.count.charges.Load()
	}
	defer stop()

	began := time.Now()
	end := time.After(c.Duration)
	var tick <-chan time.Time
	if c.KillEvery > 0 {
		ticker := time.NewTicker(c.KillEvery)
		defer ticker.Stop()
		tick = ticker.C
	}
	verify := func(what string, settled bool) error {
		n, err := check(cl, key, w.ledger, settled)
		if err != nil {
			return err
		}
		t.Checks++
		t.StreamChecks += n
		fmt.Fprintf(c.Out, "%6s  %s: %d writes acked, %d streams read back, chains verify\n",
			time.Since(began).Round(time.Second), what, w.count.writes.Load(), n)
		return w.bad.err()
	}
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	var lastWrites int64
	lastAt := began
	for running := true; running; {
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-end:
			running = false
		case <-progress.C:
			n, now := w.count.writes.Load(), time.Now()
			fmt.Fprintf(c.Out, "%6s  %d writes acked (%.0f/s), %d reads, %d conflicts, %d requests without answer\n",
				now.Sub(began).Round(time.Second), n, float64(n-lastWrites)/now.Sub(lastAt).Seconds(),
				w.count.reads.Load(), w.count.conflicts.Load(), w.count.unavailable.Load())
			lastWrites, lastAt = n, now
		case <-tick:
			// j17 verify is not run here: it would recover the crashed stores before the server
			// does, and it reads an index behind its log (normal after a crash) as a problem.
			srv.kill()
			if err := srv.start(); err != nil {
				return t, err
			}
			t.Restarts++
			if err := verify(fmt.Sprintf("restart %d", t.Restarts), false); err != nil {
				return t, err
			}
		}
	}
	stop()
	if err := settle(ctx, w, op); err != nil {
		return t, err
	}
	if err := verify("final", true); err != nil {
		return t, err
	}
	srv.stop()
	if err := srv.verify(); err != nil {
		return t, err
	}
	t.OfflineVerifies++
	return t, nil
}

// setUp logs in as the operator, creates the instance, deploys the spec to staging and returns
// a staging write key and the operator's session.
func setUp(c *client) (string, *operator, error) {
	var login struct{ Token string }
	if err := c.must("POST", "/api/login", "", map[string]string{"email": adminEmail, "password": adminPassword}, 200, &login); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	spec := map[string]any{"environment": "staging", "spec": json.RawMessage(specJSON)}
	if err := c.must("POST", "/api/instances", login.Token, map[string]string{"name": "soak"}, 201, nil); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	if err := c.must("POST", "/api/instances/soak/spec", login.Token, spec, 200, nil); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	var key struct{ Key string }
	if err := c.must("POST", "/api/instances/soak/keys", login.Token, map[string]string{"name": "soak", "scope": "write", "environment": "staging"}, 201, &key); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	return key.Key, &operator{c: c, token: login.Token, instance: "soak", env: "staging"}, nil
}
