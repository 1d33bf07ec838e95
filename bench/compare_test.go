package bench

import (
	"math"
	"strings"
	"testing"
)

func report(commit string, rows ...Row) *Report {
	for i := range rows {
		rows[i].median()
	}
	return &Report{Commit: commit, Scenarios: []*Scenario{{
		Name: "write/conns=16", Columns: []string{MetricEventsPerSec, MetricP99, MetricCPU}, ChartMetric: MetricEventsPerSec, Rows: rows,
	}}}
}

func runs(metric string, vs ...float64) []Sample {
	var out []Sample
	for _, v := range vs {
		out = append(out, Sample{metric: v})
	}
	return out
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name        string
		old, cur    Row
		metric      string
		change      float64
		significant bool
		verdict     string
		absent      bool
	}{
		{name: "throughput up, runs apart", metric: MetricEventsPerSec,
			old: Row{System: "j17", Runs: runs(MetricEventsPerSec, 100, 110, 90)}, cur: Row{System: "j17", Runs: runs(MetricEventsPerSec, 200, 210, 190)},
			change: 100, significant: true, verdict: "better"},
		{name: "latency up is worse", metric: MetricP99,
			old: Row{System: "j17", Runs: runs(MetricP99, 1, 1.1, 0.9)}, cur: Row{System: "j17", Runs: runs(MetricP99, 2, 2.1, 1.9)},
			change: 100, significant: true, verdict: "worse"},
		{name: "overlapping runs are noise", metric: MetricEventsPerSec,
			old: Row{System: "j17", Runs: runs(MetricEventsPerSec, 100, 150, 120)}, cur: Row{System: "j17", Runs: runs(MetricEventsPerSec, 135, 160, 130)},
			change: 12.5, significant: false, verdict: "better"},
		{name: "a single run tells nothing", metric: MetricEventsPerSec,
			old: Row{System: "j17", Runs: runs(MetricEventsPerSec, 100)}, cur: Row{System: "j17", Runs: runs(MetricEventsPerSec, 300)},
			change: 200, significant: false, verdict: "better"},
		{name: "CPU has no direction", metric: MetricCPU,
			old: Row{System: "j17", Runs: runs(MetricCPU, 49, 51)}, cur: Row{System: "j17", Runs: runs(MetricCPU, 99, 101)},
			change: 100, significant: true, verdict: ""},
		{name: "failed rows are left out", metric: MetricEventsPerSec, absent: true,
			old: Row{System: "j17", Failure: "HTTP 404"}, cur: Row{System: "j17", Runs: runs(MetricEventsPerSec, 300, 301)}},
		{name: "rows of one system with different notes are apart", metric: MetricEventsPerSec, absent: true,
			old: Row{System: "j17", Note: "cached", Runs: runs(MetricEventsPerSec, 1, 2)}, cur: Row{System: "j17", Note: "uncached", Runs: runs(MetricEventsPerSec, 3, 4)}},
		{name: "systems only on one side are left out", metric: MetricEventsPerSec, absent: true,
			old: Row{System: "redis", Runs: runs(MetricEventsPerSec, 1, 2)}, cur: Row{System: "j17", Runs: runs(MetricEventsPerSec, 3, 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Compare(report("a", tc.old), report("b", tc.cur))
			var got *Delta
			for i := range ds {
				if ds[i].Metric == tc.metric {
					got = &ds[i]
				}
			}
			if tc.absent {
				if got != nil {
					t.Fatalf("got a delta %+v, want none", *got)
				}
				return
			}
			if got == nil {
				t.Fatalf("got no delta for %s, want one", tc.metric)
			}
			if math.Abs(got.Change-tc.change) > 1e-9 || got.Significant != tc.significant || got.Verdict != tc.verdict {
				t.Errorf("got change %.2f significant %v verdict %q, want %.2f %v %q", got.Change, got.Significant, got.Verdict, tc.change, tc.significant, tc.verdict)
			}
		})
	}
}

func TestWriteComparison(t *testing.T) {
	ds := []Delta{
		{Scenario: "write/conns=16", System: "j17", Metric: MetricEventsPerSec, Old: 100, New: 200, Change: 100, Significant: true, Verdict: "better"},
		{Scenario: "write/conns=16", System: "j17", Metric: MetricCPU, Old: 50, New: 75, Change: 50, Significant: true},
		{Scenario: "write/conns=16", System: "j17", Metric: MetricP99, Old: 1, New: 1.1, Change: 10},
		{Scenario: "write/conns=16", System: "j17", Metric: MetricErrors, Old: 0, New: 3, Change: math.NaN()},
	}
	var b strings.Builder
	if err := WriteComparison(&b, "a", "b", ds); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+100.0% (better)", "+50.0%  ", "~ (+10.0%, runs overlap)", "n/a"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
}
