package bench

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// runLog records, in order, which system each run of a scenario dialled.
type runLog struct {
	mu   sync.Mutex
	runs []string
}

// countingSystem is a System whose connections answer at once; each Dial is one run (the
// measurements below use one connection).
type countingSystem struct {
	System
	name    string
	log     *runLog
	failing bool
}

func (c *countingSystem) Name() string { return c.name }
func (c *countingSystem) PIDs() []int  { return nil }
func (c *countingSystem) Dial() (Conn, error) {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	c.log.runs = append(c.log.runs, c.name)
	return &countingConn{failing: c.failing}, nil
}

type countingConn struct {
	Conn
	failing bool
}

func (c *countingConn) Append(string, string, []Event, int) error {
	if c.failing {
		return errors.New("refused")
	}
	return nil
}
func (c *countingConn) Close() error { return nil }

// TestScenarioRunsAlternate checks that a scenario takes one run of each system in turn, rather
// than all runs of one system and then all of the next, and that each row still gets all its runs
// and their median; a measurement that failed is not run again and keeps its failure.
func TestScenarioRunsAlternate(t *testing.T) {
	log := &runLog{}
	s := &Suite{cfg: Config{Runs: 3, Duration: 20 * time.Millisecond}}
	s.systems = []System{
		&countingSystem{name: "a", log: log},
		&countingSystem{name: "b", log: log},
		&countingSystem{name: "c", log: log, failing: true},
	}
	sc := scenario{
		Name: "write/test", Columns: throughputColumns,
		plan: func(_ context.Context, _ *Suite, sys System) ([]*measurement, error) {
			op := func(c Conn, _ int, _ uint64) error { return c.Append("item", "x", nil, 0) }
			return []*measurement{newMeasurement(sys, "", 1, 1, op, nil)}, nil
		},
		more: func(_ context.Context, _ *Suite, sys System, measured Row) []Row {
			return []Row{{System: sys.Name(), Note: "more", Failure: measured.Failure}}
		},
	}
	out := s.runScenario(context.Background(), sc)

	if got, want := strings.Join(log.runs, ""), "abcabab"; got != want {
		t.Fatalf("runs in the order %q, want %q (c fails at its first run and is not run again)", got, want)
	}
	var rows []string
	for _, r := range out.Rows {
		rows = append(rows, r.System+"/"+r.Note)
		switch {
		case r.Note == "more":
		case r.System == "c":
			if r.Failure == "" {
				t.Errorf("row of c: no failure")
			}
		default:
			if len(r.Runs) != 3 || r.Median[MetricOpsPerSec] <= 0 {
				t.Errorf("row of %s: %d runs, median %v; want 3 runs and a median", r.System, len(r.Runs), r.Median)
			}
		}
	}
	if want := []string{"a/", "a/more", "b/", "b/more", "c/", "c/more"}; !slices.Equal(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
}

func TestParseCPULine(t *testing.T) {
	j, err := parseCPULine("cpu  100 5 50 800 20 1 4 2 7 0\n")
	if err != nil {
		t.Fatal(err)
	}
	// user nice system idle iowait irq softirq steal; guest (7) is already in user.
	if want := (jiffies{total: 982, idle: 800}); j != want {
		t.Errorf("parseCPULine = %+v, want %+v", j, want)
	}
	for _, bad := range []string{"", "intr 1 2 3 4 5", "cpu 1 2 x 4 5"} {
		if _, err := parseCPULine(bad); err == nil {
			t.Errorf("parseCPULine(%q): no error", bad)
		}
	}
}

func TestWaitQuietReturnsOnceIdleEnough(t *testing.T) {
	// Any machine is at least 0% idle: the first window ends the wait.
	waited, quiet := waitQuiet(context.Background(), 0)
	if !quiet || waited > 2*quietWindow+time.Second {
		t.Errorf("waitQuiet(0) = %v, %v; want quiet after one window", waited, quiet)
	}
}

// The map scenarios price an order in plain writes at the same connection count, which they run
// themselves, whether or not the suite has a write scenario at that count.
func TestMapScenarioAgainstPlainWrite(t *testing.T) {
	for _, writeConns := range [][]int{{1, 16, 64}, {1, 64}} {
		cfg := DefaultConfig()
		cfg.WriteConns, cfg.Conns, cfg.MapItems, cfg.MapCatalog = writeConns, 16, 10, 10_000
		scs := (&Suite{cfg: cfg}).scenarios()
		for _, name := range []string{"map/items=10", "map/items=10/catalog=10000"} {
			i := slices.IndexFunc(scs, func(sc scenario) bool { return sc.Name == name })
			if i < 0 {
				t.Fatalf("no %s scenario", name)
			}
			want := &Against{Base: "write/conns=16", EventsPerRequest: 11}
			if got := scs[i].against; !reflect.DeepEqual(got, want) {
				t.Errorf("%s, write conns %v: against %+v, want %+v", name, writeConns, got, want)
			}
			if scs[i].reference == nil {
				t.Errorf("%s, write conns %v: no reference workload", name, writeConns)
			}
		}
	}
}

// A scenario priced against another workload runs that workload in its own rounds, on each
// system right after the system's run, for throughput only; its rows keep their latency runs.
func TestReferenceRunsInTheScenarioRounds(t *testing.T) {
	log := &runLog{}
	s := &Suite{cfg: Config{Runs: 2, Duration: 20 * time.Millisecond, Conns: 1}}
	s.systems = []System{&countingSystem{name: "a", log: log}, &countingSystem{name: "b", log: log}}
	op := func(c Conn, _ int, _ uint64) error { return c.Append("item", "x", nil, 0) }
	sc := scenario{
		Name: "map/test", Columns: throughputColumns,
		plan: func(_ context.Context, _ *Suite, sys System) ([]*measurement, error) {
			return []*measurement{newMeasurement(sys, "", 1, 11, op, nil)}, nil
		},
		against:   &Against{Base: "write/test", EventsPerRequest: 11},
		reference: op,
	}
	out := s.runScenario(context.Background(), sc)

	// Each run dials once: a's run and a's reference, then b's, twice.
	if got, want := strings.Join(log.runs, ""), "aabbaabb"; got != want {
		t.Fatalf("dials in the order %q, want %q", got, want)
	}
	if len(out.Reference) != 2 || out.Reference[0].System != "a" || out.Reference[1].System != "b" {
		t.Fatalf("reference rows %+v, want one of a and one of b", out.Reference)
	}
	for _, r := range out.Reference {
		if len(r.Runs) != 2 || r.Median[MetricEventsPerSec] <= 0 {
			t.Errorf("reference of %s: %d runs, median %v; want 2 runs and a median", r.System, len(r.Runs), r.Median)
		}
		if _, ok := r.Median[MetricP99]; ok {
			t.Errorf("reference of %s has a latency, want throughput only", r.System)
		}
	}
	for _, r := range out.Rows {
		if _, ok := r.Median[MetricP99]; !ok {
			t.Errorf("row of %s has no latency", r.System)
		}
	}
}

// The catalog variant runs only with a catalog that has room for an order's distinct items.
func TestCatalogScenarioNeedsACatalog(t *testing.T) {
	for _, c := range []struct {
		catalog int
		want    bool
	}{{0, false}, {9, false}, {10, true}, {10_000, true}} {
		cfg := DefaultConfig()
		cfg.MapItems, cfg.MapCatalog = 10, c.catalog
		scs := (&Suite{cfg: cfg}).scenarios()
		got := slices.ContainsFunc(scs, func(sc scenario) bool { return strings.HasPrefix(sc.Name, "map/items=10/catalog=") })
		if got != c.want {
			t.Errorf("catalog of %d: scenario present %v, want %v", c.catalog, got, c.want)
		}
	}
}

func TestPickDistinct(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for _, n := range []int{1, 3, len(ids)} {
		for range 100 {
			got := pickDistinct(ids, n)
			seen := map[string]bool{}
			for _, id := range got {
				if seen[id] || !slices.Contains(ids, id) {
					t.Fatalf("pickDistinct(%d) = %v: not %d distinct ids of the list", n, got, n)
				}
				seen[id] = true
			}
			if len(got) != n {
				t.Fatalf("pickDistinct(%d) returned %d ids", n, len(got))
			}
		}
	}
}

// A refusal for a race is asked again; a system that keeps refusing fails its run, with the
// count, instead of hanging it.
func TestRetryRaces(t *testing.T) {
	other := errors.New("connection reset")
	cases := []struct {
		name      string
		refusals  int   // attempts refused before the outcome
		outcome   error // what the attempt after the refusals returns
		wantCalls int
		wantErr   error
	}{
		{"accepted at once", 0, nil, 1, nil},
		{"accepted after a race", 1, nil, 2, nil},
		{"accepted at the last attempt", raceRetries - 1, nil, raceRetries, nil},
		{"another error is not retried", 0, other, 1, other},
		{"refused for good", raceRetries, nil, raceRetries, ErrConflict},
	}
	for _, c := range cases {
		calls := 0
		err := retryRaces(func() error {
			calls++
			if calls <= c.refusals {
				return ErrConflict
			}
			return c.outcome
		})
		if calls != c.wantCalls || !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
			t.Errorf("%s: %d calls, err %v; want %d calls, err %v", c.name, calls, err, c.wantCalls, c.wantErr)
		}
		if c.wantErr == ErrConflict {
			got := failed("j17", "", err).Failure
			if !strings.Contains(got, "unexpected conflict") || !strings.Contains(got, fmt.Sprintf("refused %d times", raceRetries)) {
				t.Errorf("%s: the failed row says %q", c.name, got)
			}
		}
	}
}
