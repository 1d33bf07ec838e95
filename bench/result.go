package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// Metric names shared by the tables, the JSON results and the comparison.
const (
	MetricEventsPerSec = "events/s"
	MetricOpsPerSec    = "ops/s"
	MetricP50          = "p50_ms"
	MetricP99          = "p99_ms"
	MetricCPU          = "cpu_pct"
	MetricLoadgenCPU   = "loadgen_cpu_pct"
	MetricPeakMem      = "peak_mem_mb"
	MetricErrors       = "errors"
	MetricConflicts    = "conflict_pct"
	MetricStartup      = "startup_ms"
	MetricBytesPerEvt  = "bytes/event"
	MetricMem          = "mem_mb"
	MetricMemRestart   = "mem_restart_mb"
	MetricEvents       = "events"
)

// better says which way a metric improves, for the comparison: +1 higher, -1 lower. Metrics not
// listed (CPU, errors, sizes) have no good direction on their own.
var better = map[string]int{
	MetricEventsPerSec: 1, MetricOpsPerSec: 1,
	MetricP50: -1, MetricP99: -1, MetricPeakMem: -1, MetricMem: -1, MetricMemRestart: -1,
	MetricStartup: -1, MetricBytesPerEvt: -1, MetricConflicts: -1,
}

// Sample is one run of one system in one scenario: metric name to value.
type Sample map[string]float64

// Row is one system in one scenario.
type Row struct {
	System  string   `json:"system"`
	Runs    []Sample `json:"runs,omitempty"`
	Median  Sample   `json:"median,omitempty"`
	Failure string   `json:"failure,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// Scenario is one table of BENCHMARKS.md.
type Scenario struct {
	Name        string   `json:"name"` // key=value form, e.g. "write/conns=16"
	Title       string   `json:"title"`
	Measures    string   `json:"measures"`
	Columns     []string `json:"columns"`      // metrics shown in the table, in order
	ChartMetric string   `json:"chart_metric"` // metric drawn in the chart
	Rows        []Row    `json:"rows"`
	// Against, when set, prices this scenario's requests in single-event requests of another
	// workload, system by system.
	Against *Against `json:"against,omitempty"`
	// Reference holds, when Against is set, each system's runs of Against.Base's workload taken
	// in this scenario's rounds, each right after the system's run here: the unit of Against,
	// measured under the same conditions. Base's own table is measured minutes earlier, and a
	// virtual machine's speed drifts by tens of percent within minutes.
	Reference []Row `json:"reference,omitempty"`
}

// Against names the workload whose single-event requests are the unit of cost: that of the
// scenario Base, which the suite runs again in the rounds of the scenario that sets it
// (Scenario.Reference). A system's request of this scenario costs the reference's events/s ÷
// (this scenario's events/s ÷ EventsPerRequest) of them. Base runs as many connections as the
// scenario, so the ratio is what one request costs against the other, in throughput.
type Against struct {
	Base             string `json:"base"`
	EventsPerRequest int    `json:"events_per_request"`
}

// Machine describes where the suite ran.
type Machine struct {
	CPU        string  `json:"cpu"`
	Cores      int     `json:"cores"`
	MemoryGB   float64 `json:"memory_gb"`
	Disk       string  `json:"disk"`
	FsyncP50us float64 `json:"fsync_p50_us"`
	FsyncP99us float64 `json:"fsync_p99_us"`
	Kernel     string  `json:"kernel"`
}

// Report is everything one suite run produced; it is also the JSON results file.
type Report struct {
	Started   time.Time         `json:"started"`
	Command   string            `json:"command"`
	Commit    string            `json:"commit"`
	Quick     bool              `json:"quick"`
	Machine   Machine           `json:"machine"`
	Versions  map[string]string `json:"versions"`
	Settings  map[string]string `json:"settings"`
	Peers     map[string]string `json:"peers"` // system -> "ok" or why it could not start
	Scenarios []*Scenario       `json:"scenarios"`
}

// label names the row: its system, and its note when it has one.
func (r *Row) label() string {
	if r.Note == "" {
		return r.System
	}
	return r.System + " (" + r.Note + ")"
}

// median fills r.Median with the per-metric median of its runs.
func (r *Row) median() {
	if len(r.Runs) == 0 {
		return
	}
	r.Median = Sample{}
	for k := range r.Runs[0] {
		vs := make([]float64, 0, len(r.Runs))
		for _, s := range r.Runs {
			if v, ok := s[k]; ok {
				vs = append(vs, v)
			}
		}
		r.Median[k] = medianOf(vs)
	}
}

func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteJSON writes the report to path.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode results: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadReport reads a results file written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: read results: %w", err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("bench: decode %s: %w", path, err)
	}
	if len(rep.Scenarios) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoData)
	}
	return &rep, nil
}
