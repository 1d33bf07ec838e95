package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// freshScenarios are those that need a system of their own: crash startup at each size, disk
// bytes per event, and memory at many streams. The peers take part with redis-everysec (the
// append-only file is the same under either fsync policy) and postgres.
func (s *Suite) freshScenarios(ctx context.Context) error {
	var facts []factory
	for _, f := range s.factories() {
		if f.name == "redis-always" {
			continue
		}
		if strings.HasPrefix(s.report.Peers[f.name], "not started") {
			continue
		}
		facts = append(facts, f)
	}
	disk := &Scenario{Title: "Disk bytes per event",
		Measures: "the growth of the data directory during the largest crash-startup load, divided by the events written (Redis: its append-only file; Postgres: tables, indexes and WAL)",
		Columns:  []string{MetricEvents, MetricBytesPerEvt}, ChartMetric: MetricBytesPerEvt}
	for _, n := range s.cfg.StartupEvents {
		name := fmt.Sprintf("startup/events=%d", n)
		if s.cfg.Only != nil && !s.cfg.Only.MatchString(name) && !s.cfg.Only.MatchString("disk") {
			continue
		}
		s.logf("scenario %s", name)
		disk.Name, disk.Rows = fmt.Sprintf("disk/events=%d", n), nil
		sc := &Scenario{Name: name, Title: fmt.Sprintf("Startup after a crash with %d events", n),
			Measures: fmt.Sprintf("%d events in aggregates of 100 written with batches, then SIGKILL (Postgres: immediate shutdown), then the time from exec to the first successful request (j17: a listing of the written type; Redis: a command, refused while the append-only file loads; Postgres: a connection, refused during recovery)", n),
			Columns:  []string{MetricStartup, MetricEventsPerSec, MetricBytesPerEvt, MetricMem}, ChartMetric: MetricStartup}
		for _, f := range facts {
			row := s.startupRow(ctx, f, n)
			s.logRow(row.label(), row, sc.Columns)
			sc.Rows = append(sc.Rows, row)
			d := Row{System: row.System, Failure: row.Failure}
			if row.Failure == "" {
				d.Runs = []Sample{{MetricEvents: float64(n), MetricBytesPerEvt: row.Median[MetricBytesPerEvt]}}
				d.median()
			}
			disk.Rows = append(disk.Rows, d)
		}
		s.report.Scenarios = append(s.report.Scenarios, sc)
	}
	if len(disk.Rows) > 0 {
		s.report.Scenarios = append(s.report.Scenarios, disk)
	}
	name := fmt.Sprintf("memory/streams=%d", s.cfg.MemoryStreams)
	if s.cfg.Only != nil && !s.cfg.Only.MatchString(name) {
		return ctx.Err()
	}
	s.logf("scenario %s", name)
	sc := &Scenario{Name: name, Title: fmt.Sprintf("Memory at %d streams", s.cfg.MemoryStreams),
		Measures: fmt.Sprintf("%d aggregates of one event each written with single-event writes at 64 connections; resident memory of the server after the load and after a restart", s.cfg.MemoryStreams),
		Columns:  []string{MetricMem, MetricMemRestart, MetricEventsPerSec, MetricBytesPerEvt}, ChartMetric: MetricMem}
	for _, f := range facts {
		row := s.memoryRow(ctx, f)
		s.logRow(row.label(), row, sc.Columns)
		sc.Rows = append(sc.Rows, row)
	}
	s.report.Scenarios = append(s.report.Scenarios, sc)
	return ctx.Err()
}

// startFresh starts a system of its own in a new directory and measures its empty size.
func (s *Suite) startFresh(ctx context.Context, f factory, tag string) (System, int64, error) {
	sys := f.make(filepath.Join(s.cfg.WorkDir, tag+"-"+f.name))
	if err := sys.Start(ctx); err != nil {
		_ = sys.Stop()
		return nil, 0, err
	}
	return sys, dirBytes(sys.DataDir()), nil
}

func (s *Suite) startupRow(ctx context.Context, f factory, n int) Row {
	sys, base, err := s.startFresh(ctx, f, fmt.Sprintf("startup%d", n))
	if err != nil {
		return failed(f.name, "", err)
	}
	defer func() { _ = sys.Stop() }()
	aggs := max(n/100, 1)
	ids := make([]string, aggs)
	for i := range ids {
		ids[i] = NewID()
	}
	took, err := fill(ctx, sys, s.cfg.Conns, uint64(aggs), func(c Conn, _ int, seq uint64) error {
		return c.Append("item", ids[seq], events(min(n, 100), seq*100), 0)
	})
	if err != nil {
		return failed(f.name, "", err)
	}
	total := aggs * min(n, 100)
	rss := memoryMB(sys.PIDs())
	bytes := float64(dirBytes(sys.DataDir())-base) / float64(total)
	row := Row{System: f.name}
	for range s.cfg.Runs {
		if err := sys.Crash(); err != nil {
			return failed(f.name, "", err)
		}
		d, err := sys.Restart(ctx)
		if err != nil {
			return failed(f.name, "", fmt.Errorf("restart after crash: %w", err))
		}
		row.Runs = append(row.Runs, Sample{
			MetricStartup: float64(d.Microseconds()) / 1e3, MetricEventsPerSec: float64(total) / took.Seconds(),
			MetricBytesPerEvt: bytes, MetricMem: rss,
		})
	}
	row.median()
	return row
}

func (s *Suite) memoryRow(ctx context.Context, f factory) Row {
	sys, base, err := s.startFresh(ctx, f, "memory")
	if err != nil {
		return failed(f.name, "", err)
	}
	defer func() { _ = sys.Stop() }()
	n := s.cfg.MemoryStreams
	took, err := fill(ctx, sys, 64, uint64(n), func(c Conn, _ int, seq uint64) error {
		return c.Append("item", NewID(), events(1, seq), 0)
	})
	if err != nil {
		return failed(f.name, "", err)
	}
	sample := Sample{
		MetricMem:          memoryMB(sys.PIDs()),
		MetricEventsPerSec: float64(n) / took.Seconds(),
		MetricBytesPerEvt:  float64(dirBytes(sys.DataDir())-base) / float64(n),
	}
	if err := sys.Stop(); err != nil {
		return failed(f.name, "", err)
	}
	if _, err := sys.Restart(ctx); err != nil {
		return failed(f.name, "", fmt.Errorf("restart: %w", err))
	}
	sample[MetricMemRestart] = memoryMB(sys.PIDs())
	row := Row{System: f.name, Runs: []Sample{sample}}
	row.median()
	return row
}
