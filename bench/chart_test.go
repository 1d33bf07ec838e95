package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteChart(t *testing.T) {
	root := t.TempDir()
	s := &Scenario{Name: "write/conns=16", Title: "Writes", ChartMetric: MetricEventsPerSec, Rows: []Row{
		{System: "j17", Median: Sample{MetricEventsPerSec: 1000}},
		{System: "redis", Note: "always", Median: Sample{MetricEventsPerSec: 2000}},
		{System: "postgres", Failure: "down"},
	}}
	if err := WriteChart(root, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ChartFile(s)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("chart %s is not a PNG", ChartFile(s))
	}
	failed := &Scenario{Name: "read/events=10", ChartMetric: MetricOpsPerSec, Rows: []Row{{System: "j17", Failure: "HTTP 404"}}}
	if err := WriteChart(root, failed); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ChartFile(failed))); !os.IsNotExist(err) {
		t.Errorf("a scenario with nothing to draw got a chart (stat: %v)", err)
	}
}
