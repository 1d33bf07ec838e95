package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
)

// scenario is one table: what it measures and how each system runs it.
type scenario struct {
	Name, Title, Measures string
	Columns               []string
	Chart                 string
	onlyJ17               bool
	// freshStreams marks the scenarios whose every request writes to new aggregates: peers
	// that keep those in memory are emptied after them (see resetter).
	freshStreams bool
	// plan readies sys for the scenario (writes the data it reads, say) and returns the rows
	// to measure on it; runScenario takes their runs.
	plan func(ctx context.Context, s *Suite, sys System) ([]*measurement, error)
	// more, if set, adds rows after a row measured on sys.
	more func(ctx context.Context, s *Suite, sys System, measured Row) []Row
	// against, if set, prices the scenario's requests in those of another workload, reference,
	// which runScenario runs in the scenario's rounds (Scenario.Against, Scenario.Reference).
	against   *Against
	reference connOp
}

var (
	throughputColumns = []string{MetricEventsPerSec, MetricP50, MetricP99, MetricCPU, MetricPeakMem, MetricErrors}
	readColumns       = []string{MetricOpsPerSec, MetricP50, MetricP99, MetricCPU, MetricPeakMem, MetricErrors}
)

// scenarios are those run on the long-lived systems, in order.
func (s *Suite) scenarios() []scenario {
	c := s.cfg
	out := []scenario{{
		Name: "ceiling/healthz", Title: "Load generator ceiling: GET /healthz",
		Measures: fmt.Sprintf("the load generator against j17's trivial endpoint at %d connections, sharing the machine's cores with the server: the request rate the generator sustains when the server does almost nothing. Scenarios far below it are not limited by the generator", c.Conns),
		Columns:  []string{MetricOpsPerSec, MetricP50, MetricP99, MetricCPU, MetricLoadgenCPU, MetricPeakMem, MetricErrors}, Chart: MetricOpsPerSec, onlyJ17: true,
		plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
			return []*measurement{newMeasurement(sys, "", c.Conns, 1, func(c Conn, _ int, _ uint64) error { return c.(*j17Conn).healthz() }, nil)}, nil
		},
	}}
	for _, n := range c.WriteConns {
		out = append(out, scenario{
			Name: fmt.Sprintf("write/conns=%d", n), Title: "Durable single-event writes, " + plural(n, "connection"),
			Measures: "one event per request to a new aggregate, acknowledged after fsync",
			Columns:  throughputColumns, Chart: MetricEventsPerSec, freshStreams: true,
			plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
				return []*measurement{newMeasurement(sys, "", n, 1, singleWrite, nil)}, nil
			},
			more: func(ctx context.Context, s *Suite, sys System, measured Row) []Row {
				if r, ok := sys.(*Redis); ok && measured.Failure == "" {
					return []Row{s.redisBenchmark(ctx, r, n, measured.Median[MetricEventsPerSec])}
				}
				return nil
			},
		})
	}
	for _, n := range c.BatchSizes {
		out = append(out, scenario{
			Name: fmt.Sprintf("batch/size=%d", n), Title: fmt.Sprintf("Batches of %d events, %d connections", n, c.Conns),
			Measures: fmt.Sprintf("%d events per request to one new aggregate, all or nothing", n),
			Columns:  throughputColumns, Chart: MetricEventsPerSec, freshStreams: true,
			plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
				return []*measurement{newMeasurement(sys, "", c.Conns, n, func(c Conn, _ int, seq uint64) error {
					return c.Append("item", NewID(), events(n, seq), 0)
				}, nil)}, nil
			},
		})
	}
	plainWrite := &Against{Base: fmt.Sprintf("write/conns=%d", c.Conns), EventsPerRequest: c.MapItems + 1}
	out = append(out, scenario{
		Name: fmt.Sprintf("map/items=%d", c.MapItems), Title: fmt.Sprintf("Writes with a map implication (%d items), %d connections", c.MapItems, c.Conns),
		Measures: fmt.Sprintf("an order whose %d items each imply an event on their own inventory stream: %d events in %d streams per request, atomically (peers: the same writes in one transaction)", c.MapItems, c.MapItems+1, c.MapItems+1),
		Columns:  throughputColumns, Chart: MetricEventsPerSec, freshStreams: true, against: plainWrite, reference: singleWrite,
		plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
			return []*measurement{newMeasurement(sys, "", c.Conns, c.MapItems+1, func(cn Conn, _ int, _ uint64) error {
				skus := make([]string, c.MapItems)
				for i := range skus {
					skus[i] = NewID()
				}
				return cn.PlaceOrder(NewID(), skus)
			}, nil)}, nil
		},
	})
	if c.MapCatalog > 0 && c.MapCatalog >= c.MapItems {
		out = append(out, scenario{
			Name: fmt.Sprintf("map/items=%d/catalog=%d", c.MapItems, c.MapCatalog), Title: fmt.Sprintf("Writes with a map implication (%d items of a catalog of %d), %d connections", c.MapItems, c.MapCatalog, c.Conns),
			Measures: fmt.Sprintf("an order whose %d items are drawn at random from %d inventory streams that exist before the runs (the docs' inventory example): %d events per request, %d of them appended to existing streams, atomically (peers: the same writes in one transaction; PostgreSQL places an order again when it loses a race for an inventory stream's next version)", c.MapItems, c.MapCatalog, c.MapItems+1, c.MapItems),
			Columns:  throughputColumns, Chart: MetricEventsPerSec, freshStreams: true, against: plainWrite, reference: singleWrite,
			plan: planCatalogOrders,
		})
	}
	out = append(out, scenario{
		Name: fmt.Sprintf("occ/conns=%d", c.Conns), Title: fmt.Sprintf("OCC contention on one hot aggregate, %d connections", c.Conns),
		Measures: "every connection appends to the same aggregate with the length it last saw; on a conflict it re-reads the length and retries. events/s counts successful writes, latency includes retries",
		Columns:  []string{MetricEventsPerSec, MetricConflicts, MetricP50, MetricP99, MetricCPU, MetricErrors}, Chart: MetricEventsPerSec,
		plan: planOCC,
	})
	for _, n := range c.ReadSizes {
		out = append(out, scenario{
			Name: fmt.Sprintf("read/events=%d", n), Title: fmt.Sprintf("Reads of an aggregate of %d events, %d connections", n, c.Conns),
			Measures: "GET of one aggregate: j17 folds the events into state (cached, or with ?synchronous=true uncached); the peers return the raw events (XRANGE, SELECT ... ORDER BY version)",
			Columns:  readColumns, Chart: MetricOpsPerSec,
			plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
				ids, err := populate(ctx, sys, 4, 1, n)
				if err != nil {
					return nil, err
				}
				read := func(cached bool) connOp {
					return func(c Conn, _ int, _ uint64) error { return c.Read("item", ids[0], cached) }
				}
				if !sys.HasCache() {
					return []*measurement{newMeasurement(sys, "", c.Conns, 1, read(false), nil)}, nil
				}
				return []*measurement{
					newMeasurement(sys, "cached", c.Conns, 1, read(true), nil),
					newMeasurement(sys, "uncached", c.Conns, 1, read(false), nil),
				}, nil
			},
		})
	}
	out = append(out, scenario{
		Name: "list/limit=100", Title: fmt.Sprintf("Listing 100 aggregate ids, %d connections", c.Conns),
		Measures: "GET /item?limit=100 over the aggregates the earlier scenarios wrote (Redis: SRANDMEMBER of the id set; Postgres: SELECT ... LIMIT)",
		Columns:  readColumns, Chart: MetricOpsPerSec,
		plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
			if _, err := populate(ctx, sys, 4, 200, 1); err != nil {
				return nil, err
			}
			return []*measurement{newMeasurement(sys, "", c.Conns, 1, func(c Conn, _ int, _ uint64) error { return c.List("item", 100) }, nil)}, nil
		},
	})
	out = append(out, scenario{
		Name: "mixed/reads=90", Title: fmt.Sprintf("Mixed workload: 90%% reads, 10%% writes, %d connections", c.Conns),
		Measures: "over 1,000 aggregates of 10 events: nine reads (cached where the system has a cache) for each appended event",
		Columns:  readColumns, Chart: MetricOpsPerSec,
		plan: func(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
			ids, err := populate(ctx, sys, 8, 1000, 10)
			if err != nil {
				return nil, err
			}
			return []*measurement{newMeasurement(sys, "", c.Conns, 1, func(c Conn, _ int, seq uint64) error {
				if seq%10 == 9 {
					return appendRetrying(c, pick(ids), seq)
				}
				return c.Read("item", pick(ids), true)
			}, nil)}, nil
		},
	})
	return out
}

// redisBenchmark runs redis-benchmark as many times as the other measurements, each for about
// one run's duration at the rate our generator reached and, like them, on an idle machine.
func (s *Suite) redisBenchmark(ctx context.Context, r *Redis, conns int, rate float64) Row {
	const note = "redis-benchmark: plain XADD without the OCC script, closed-loop"
	row := Row{System: r.Name(), Note: note}
	n := max(1000, int(rate*s.cfg.Duration.Seconds()))
	for range s.cfg.Runs {
		s.settle(ctx, r)
		sm, err := r.Benchmark(conns, n)
		if err != nil {
			return failed(r.Name(), note, err)
		}
		row.Runs = append(row.Runs, sm)
	}
	row.median()
	return row
}

// plural writes n with its noun, "1 connection", "16 connections".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// appendRetrying appends one event without knowing the length; a system whose OCC refused it
// because of a racing writer is asked again.
func appendRetrying(c Conn, id string, seq uint64) error {
	return retryRaces(func() error {
		return c.Append("item", id, []Event{{Type: "had_note_added", Data: payload(seq)}}, -1)
	})
}

// raceRetries bounds how often retryRaces asks again. A refusal for a race is rare and the next
// attempt almost always goes through; a system that keeps refusing is broken, and its run should
// fail rather than hang.
const raceRetries = 100

// retryRaces calls write until it returns anything but ErrConflict, at most raceRetries times;
// the last refusal, if every attempt was refused, is returned with the count.
func retryRaces(write func() error) error {
	var err error
	for range raceRetries {
		if err = write(); !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("refused %d times in a row: %w", raceRetries, err)
}

// planCatalogOrders gives every SKU of a new catalog its inventory stream, with orders of
// MapItems SKUs in catalog order, and measures orders of distinct SKUs drawn from it.
func planCatalogOrders(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
	c := s.cfg
	catalog := make([]string, c.MapCatalog)
	for i := range catalog {
		catalog[i] = NewID()
	}
	orders := (len(catalog) + c.MapItems - 1) / c.MapItems
	if _, err := fill(ctx, sys, c.Conns, uint64(orders), func(cn Conn, _ int, seq uint64) error {
		lo := int(seq) * c.MapItems
		return placeOrderRetrying(cn, catalog[lo:min(lo+c.MapItems, len(catalog))])
	}); err != nil {
		return nil, err
	}
	return []*measurement{newMeasurement(sys, "", c.Conns, c.MapItems+1, func(cn Conn, _ int, _ uint64) error {
		return placeOrderRetrying(cn, pickDistinct(catalog, c.MapItems))
	}, nil)}, nil
}

// pickDistinct returns n distinct ids of ids, drawn at random: an order names an SKU once (in
// PostgreSQL, two rows of one statement for the same stream would take the same version).
func pickDistinct(ids []string, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		if id := pick(ids); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// placeOrderRetrying places an order, again if the system refused it because of a racing
// writer (PostgreSQL's (stream, version) key, when two orders take an inventory stream's next
// version at once).
func placeOrderRetrying(c Conn, skus []string) error {
	id := NewID()
	return retryRaces(func() error { return c.PlaceOrder(id, skus) })
}

func planOCC(ctx context.Context, s *Suite, sys System) ([]*measurement, error) {
	ids, err := populate(ctx, sys, 1, 1, 1)
	if err != nil {
		return nil, err
	}
	hot := ids[0]
	known := make([]int, s.cfg.Conns)
	for i := range known {
		known[i] = 1
	}
	var conflicts, writes atomic.Uint64
	op := func(c Conn, conn int, seq uint64) error {
		for {
			err := c.Append("item", hot, []Event{{Type: "had_note_added", Data: payload(seq)}}, known[conn])
			if err == nil {
				known[conn]++
				writes.Add(1)
				return nil
			}
			if !errors.Is(err, ErrConflict) {
				return err
			}
			conflicts.Add(1)
			if known[conn], err = c.Length("item", hot); err != nil {
				return err
			}
		}
	}
	extra := func(sm Sample) {
		w, k := writes.Swap(0), conflicts.Swap(0)
		if w+k > 0 {
			sm[MetricConflicts] = float64(k) / float64(w+k) * 100
		}
	}
	return []*measurement{newMeasurement(sys, "", s.cfg.Conns, 1, op, extra)}, nil
}
