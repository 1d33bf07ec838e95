package bench

import (
	"strings"
	"testing"
)

func TestWriteBenchfmt(t *testing.T) {
	rep := &Report{Commit: "abc", Scenarios: []*Scenario{{Name: "write/conns=16", Rows: []Row{
		{System: "j17", Runs: []Sample{{MetricEventsPerSec: 100, MetricP50: 0.5}, {MetricEventsPerSec: 120, MetricP50: 0.4}}},
		{System: "redis-always", Note: "redis-benchmark: plain XADD", Runs: []Sample{{MetricEventsPerSec: 9}}},
		{System: "postgres", Failure: "down"},
	}, Reference: []Row{{System: "j17", Runs: []Sample{{MetricEventsPerSec: 80}}}}}}}
	var b strings.Builder
	if err := WriteBenchfmt(&b, rep); err != nil {
		t.Fatal(err)
	}
	want := "commit: abc\ncpu: \n" +
		"BenchmarkWrite/conns=16/system=j17 1 100 events/s 0.5 p50_ms\n" +
		"BenchmarkWrite/conns=16/system=j17 1 120 events/s 0.4 p50_ms\n" +
		"BenchmarkWrite/conns=16/system=redis-always__redis-benchmark__plain_XADD_ 1 9 events/s\n" +
		"BenchmarkWrite/conns=16/reference/system=j17 1 80 events/s\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
