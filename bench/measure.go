package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"
)

// connOp performs one request on a connection; the int is the index of the connection.
type connOp func(c Conn, conn int, seq uint64) error

// dialAll opens n connections to sys.
func dialAll(sys System, n int) ([]Conn, error) {
	cs := make([]Conn, 0, n)
	for range n {
		c, err := sys.Dial()
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeAll(cs []Conn) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// A measurement makes one row: op on one system at a number of connections, taken Runs times.
// The suite takes the runs of a scenario in rounds, one run of every measurement of every system
// per round (see runScenario), so each run dials its own connections and closes them after.
type measurement struct {
	sys                System
	conns, eventsPerOp int
	op                 connOp
	// extra, if set, adds the scenario's own figures to each run's sample.
	extra func(Sample)
	// throughputOnly skips the open-loop run: the measurement is only a unit of throughput
	// (Scenario.Reference), and its latency would be a second copy of another table's.
	throughputOnly bool
	row            Row
}

func newMeasurement(sys System, note string, conns, eventsPerOp int, op connOp, extra func(Sample)) *measurement {
	return &measurement{sys: sys, conns: conns, eventsPerOp: eventsPerOp, op: op, extra: extra, row: Row{System: sys.Name(), Note: note}}
}

// runOnce takes one run of m: closed-loop for throughput, CPU and peak memory, then (unless
// m.throughputOnly) open-loop at half that throughput for latency. A run whose every request
// failed ends the measurement with the failure; later rounds skip it.
func (s *Suite) runOnce(ctx context.Context, m *measurement) {
	if m.row.Failure != "" {
		return
	}
	cs, err := dialAll(m.sys, m.conns)
	if err != nil {
		m.row = failed(m.sys.Name(), m.row.Note, err)
		return
	}
	defer closeAll(cs)
	drive := func(load Load) *DriveResult {
		return Drive(ctx, load, func(conn int, seq uint64) error { return m.op(cs[conn], conn, seq) })
	}
	pids := m.sys.PIDs()
	resetPeak(pids)
	cpu0, self0 := cpuSeconds(pids), cpuSeconds([]int{os.Getpid()})
	peakOf := sampleMemory(m.sys, memoryMB)
	closed := drive(Load{Conns: m.conns, Duration: s.cfg.Duration})
	peak := peakOf()
	cpu, self := cpuSeconds(m.sys.PIDs())-cpu0, cpuSeconds([]int{os.Getpid()})-self0
	if closed.Ops == closed.Errors {
		if closed.FirstErr == nil {
			closed.FirstErr = errors.New("no request completed")
		}
		m.row = failed(m.sys.Name(), m.row.Note, closed.FirstErr)
		return
	}
	ok := float64(closed.Ops - closed.Errors)
	secs := closed.Elapsed.Seconds()
	sample := Sample{
		MetricOpsPerSec:    ok / secs,
		MetricEventsPerSec: ok * float64(m.eventsPerOp) / secs,
		MetricCPU:          cpu / secs * 100,
		MetricLoadgenCPU:   self / secs * 100,
		MetricPeakMem:      peak,
		MetricErrors:       float64(closed.Errors),
	}
	if !m.throughputOnly {
		open := drive(Load{Conns: m.conns, Duration: s.cfg.Duration, Rate: ok / secs / 2})
		sample[MetricP50] = float64(open.Hist.Quantile(0.50)) / 1e6
		sample[MetricP99] = float64(open.Hist.Quantile(0.99)) / 1e6
		sample[MetricErrors] += float64(open.Errors)
	}
	if m.extra != nil {
		m.extra(sample)
	}
	m.row.Runs = append(m.row.Runs, sample)
}

// finish returns m's row with the medians of its runs.
func (m *measurement) finish() Row {
	if m.row.Failure == "" {
		m.row.median()
	}
	return m.row
}

// fill runs op exactly n times on conns connections as fast as the system allows, and fails on
// the first error.
func fill(ctx context.Context, sys System, conns int, n uint64, op connOp) (time.Duration, error) {
	if n == 0 {
		return 0, nil
	}
	cs, err := dialAll(sys, conns)
	if err != nil {
		return 0, err
	}
	defer closeAll(cs)
	fillCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var firstErr atomic.Pointer[error]
	r := Drive(fillCtx, Load{Conns: conns, Duration: 24 * time.Hour, Ops: n}, func(conn int, seq uint64) error {
		err := op(cs[conn], conn, seq)
		if err != nil && firstErr.CompareAndSwap(nil, &err) {
			cancel()
		}
		return err
	})
	if p := firstErr.Load(); p != nil {
		return 0, fmt.Errorf("preparing: %w", *p)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return r.Elapsed, nil
}

// payload is the data of a typical event, about 120 bytes of JSON.
func payload(seq uint64) []byte {
	return fmt.Appendf(nil, `{"name":"item %d","email":"user%d@example.com","score":%d,"tags":["a","b"],"note":"benchmark payload"}`,
		seq, seq, seq%1000)
}

// singleWrite is the request of the single-event write scenarios: one event to a new aggregate.
func singleWrite(c Conn, _ int, seq uint64) error {
	return c.Append("item", NewID(), events(1, seq), 0)
}

// events makes n events: a creation, then notes.
func events(n int, seq uint64) []Event {
	es := make([]Event, n)
	for i := range es {
		es[i] = Event{Type: "had_note_added", Data: payload(seq + uint64(i))}
	}
	es[0].Type = "was_created"
	return es
}

// populate writes aggregates of length events each, in batches of up to 100 written in order
// (each with the previous length as its expectation), and returns their ids.
func populate(ctx context.Context, sys System, conns, count, length int) ([]string, error) {
	ids := make([]string, count)
	for i := range ids {
		ids[i] = NewID()
	}
	_, err := fill(ctx, sys, conns, uint64(count), func(c Conn, _ int, seq uint64) error {
		for done := 0; done < length; done += 100 {
			es := events(min(100, length-done), seq*uint64(length)+uint64(done))
			if done > 0 {
				es[0].Type = "had_note_added"
			}
			if err := c.Append("item", ids[seq], es, done); err != nil {
				return err
			}
		}
		return nil
	})
	return ids, err
}

func pick(ids []string) string { return ids[rand.IntN(len(ids))] }
