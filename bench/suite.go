package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Suite runs the scenarios against j17 and the peers.
type Suite struct {
	cfg    Config
	report *Report
	// systems are the long-lived servers of the throughput and read scenarios.
	systems []System
}

// installHint says where a peer comes from, for the report of a peer that did not start.
var installHint = map[string]string{
	"redis-always":   " (Debian: apt-get install redis-server redis-tools)",
	"redis-everysec": " (Debian: apt-get install redis-server redis-tools)",
	"postgres":       " (Debian: apt-get install postgresql)",
}

// factory makes a system that keeps its files under dir.
type factory struct {
	name string
	make func(dir string) System
}

func (s *Suite) factories() []factory {
	fs := []factory{{"j17", func(d string) System { return &J17{Bin: s.cfg.J17Bin, Dir: d} }}}
	if slices.Contains(s.cfg.Peers, "redis") {
		fs = append(fs,
			factory{"redis-always", func(d string) System { return &Redis{Bin: s.cfg.RedisBin, Dir: d, Fsync: "always"} }},
			factory{"redis-everysec", func(d string) System { return &Redis{Bin: s.cfg.RedisBin, Dir: d, Fsync: "everysec"} }})
	}
	if slices.Contains(s.cfg.Peers, "postgres") {
		fs = append(fs, factory{"postgres", func(d string) System { return &Postgres{BinDir: s.cfg.PostgresBin, Dir: d} }})
	}
	return fs
}

func (s *Suite) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// RunSuite runs every selected scenario and returns the report. Systems are stopped and the work
// directory removed before it returns.
func RunSuite(ctx context.Context, cfg Config) (*Report, error) {
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	// The peers may run as another user, who must reach their directories.
	if err := os.Chmod(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(cfg.WorkDir)
	s := &Suite{cfg: cfg, report: &Report{
		Started: time.Now(), Command: cfg.Command, Commit: cfg.Commit, Quick: cfg.Quick,
		Versions: versions(cfg), Peers: map[string]string{},
		Settings: map[string]string{
			"runs per measurement":  strconv.Itoa(cfg.Runs),
			"duration of each run":  cfg.Duration.String(),
			"connections (default)": strconv.Itoa(cfg.Conns),
		},
	}}
	if cfg.QuietIdle > 0 {
		s.report.Settings["idle before each run"] = fmt.Sprintf("%.0f%% over %v (waiting at most %v)", cfg.QuietIdle*100, quietWindow, quietMax)
	}
	m, err := DescribeMachine(cfg.WorkDir, cfg.FsyncProbes)
	if err != nil {
		return nil, err
	}
	s.report.Machine = m
	s.logf("machine: %d cores, fsync p50 %.0fµs p99 %.0fµs", m.Cores, m.FsyncP50us, m.FsyncP99us)

	defer func() {
		for _, sys := range s.systems {
			_ = sys.Stop()
		}
	}()
	for _, f := range s.factories() {
		sys := f.make(filepath.Join(cfg.WorkDir, f.name))
		if err := sys.Start(ctx); err != nil {
			_ = sys.Stop() // a server that came up but could not be prepared
			if f.name == "j17" {
				return nil, fmt.Errorf("bench: start j17: %w", err)
			}
			s.report.Peers[f.name] = "not started: " + err.Error() + installHint[f.name]
			s.logf("%s: not started: %v", f.name, err)
			continue
		}
		if f.name != "j17" {
			s.report.Peers[f.name] = "started on 127.0.0.1"
		}
		s.systems = append(s.systems, sys)
	}
	for _, sc := range s.scenarios() {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cfg.Only != nil && !cfg.Only.MatchString(sc.Name) {
			continue
		}
		s.logf("scenario %s", sc.Name)
		s.report.Scenarios = append(s.report.Scenarios, s.runScenario(ctx, sc))
	}
	for _, sys := range s.systems {
		_ = sys.Stop()
	}
	s.systems = nil
	if err := s.freshScenarios(ctx); err != nil {
		return nil, err
	}
	return s.report, nil
}

// runScenario readies every system for sc, then takes the runs of their measurements in rounds:
// one run of each measurement of each system per round, in the order of the systems, each on a
// quiet machine (waitQuiet). The speed of a virtual machine drifts by tens of percent within
// minutes (its neighbours come and go); runs taken system after system would credit that drift
// to whichever system ran in the faster minutes, while alternated runs expose every system to it
// alike, so the ratios between systems hold from one make bench to the next. For the same
// reason a scenario priced in another workload's requests (sc.reference) has that workload run
// in its own rounds, on each system right after the system's runs, rather than taken from the
// other workload's table, which was measured minutes before.
func (s *Suite) runScenario(ctx context.Context, sc scenario) *Scenario {
	out := &Scenario{Name: sc.Name, Title: sc.Title, Measures: sc.Measures, Columns: sc.Columns, ChartMetric: sc.Chart, Against: sc.against}
	type planned struct {
		sys System
		ms  []*measurement
		ref *measurement // sc.reference on sys, or nil
		err error
	}
	var plans []planned
	for _, sys := range s.systems {
		if sc.onlyJ17 && sys.Name() != "j17" {
			continue
		}
		ms, err := sc.plan(ctx, s, sys)
		p := planned{sys: sys, ms: ms, err: err}
		if sc.reference != nil && err == nil {
			p.ref = newMeasurement(sys, "", s.cfg.Conns, 1, sc.reference, nil)
			p.ref.throughputOnly = true
		}
		plans = append(plans, p)
	}
	take := func(sys System, m *measurement) {
		if m.row.Failure == "" {
			s.settle(ctx, sys)
		}
		s.runOnce(ctx, m)
	}
	for range s.cfg.Runs {
		for _, p := range plans {
			for _, m := range p.ms {
				take(p.sys, m)
			}
			if p.ref != nil {
				take(p.sys, p.ref)
			}
		}
	}
	for _, p := range plans {
		var rows []Row
		if p.err != nil {
			rows = append(rows, failed(p.sys.Name(), "", p.err))
		}
		for _, m := range p.ms {
			row := m.finish()
			rows = append(rows, row)
			if sc.more != nil {
				rows = append(rows, sc.more(ctx, s, p.sys, row)...)
			}
		}
		for _, row := range rows {
			s.logRow(row.label(), row, sc.Columns)
		}
		out.Rows = append(out.Rows, rows...)
		if p.ref != nil {
			ref := p.ref.finish()
			s.logRow(fmt.Sprintf("%s (%s, reference)", ref.label(), sc.against.Base), ref, []string{MetricEventsPerSec, MetricCPU})
			out.Reference = append(out.Reference, ref)
		}
		if r, ok := p.sys.(resetter); ok && sc.freshStreams {
			if err := r.Reset(); err != nil {
				s.logf("  %s: could not empty it after the scenario: %v", p.sys.Name(), err)
			}
		}
	}
	return out
}

// logRow logs a row's medians of cols, or its failure.
func (s *Suite) logRow(label string, row Row, cols []string) {
	if row.Failure != "" {
		s.logf("  %s: FAILED: %s", label, oneLine(row.Failure))
	} else {
		s.logf("  %s: %s", label, summary(row.Median, cols))
	}
}

// settle waits, when the suite is configured to, for the machine to be idle before a run on sys
// (see waitQuiet).
func (s *Suite) settle(ctx context.Context, sys System) {
	if s.cfg.QuietIdle <= 0 {
		return
	}
	if waited, quiet := waitQuiet(ctx, s.cfg.QuietIdle); !quiet && ctx.Err() == nil {
		s.logf("  %s: the machine stayed busy for %v; running anyway", sys.Name(), waited.Round(time.Second))
	}
}

func summary(m Sample, cols []string) string {
	out := ""
	for _, c := range cols {
		if v, ok := m[c]; ok {
			out += fmt.Sprintf("%s=%s ", c, FormatNumber(v))
		}
	}
	return out
}

// failed makes the row of a system that could not run a scenario.
func failed(system, note string, err error) Row {
	msg := err.Error()
	if errors.Is(err, ErrConflict) {
		// Keep what wrapped the refusal (how often it was retried, say).
		msg = strings.Replace(msg, ErrConflict.Error(), "unexpected conflict (HTTP 409 / OCC refusal)", 1)
	}
	return Row{System: system, Note: note, Failure: msg}
}
