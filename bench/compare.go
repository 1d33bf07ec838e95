package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
)

// Delta is the change of one metric of one system in one scenario between two reports.
type Delta struct {
	Scenario string
	System   string
	Metric   string
	Old      float64
	New      float64
	// Change is (New-Old)/Old in percent; NaN when Old is zero.
	Change float64
	// Significant is false when the runs of the two sides overlap, so the change may be noise
	// (benchstat's "~").
	Significant bool
	// Verdict is "better" or "worse" given which way the metric improves, or "" for a metric
	// without a direction or an unchanged value.
	Verdict string
}

// Compare lines up the metrics that both reports measured for the same scenario and system.
func Compare(old, cur *Report) []Delta {
	oldRows := map[[2]string]Row{}
	for _, s := range old.Scenarios {
		for _, r := range s.Rows {
			oldRows[[2]string{s.Name, r.label()}] = r
		}
	}
	var ds []Delta
	for _, s := range cur.Scenarios {
		for _, r := range s.Rows {
			o, ok := oldRows[[2]string{s.Name, r.label()}]
			if !ok || o.Failure != "" || r.Failure != "" {
				continue
			}
			for _, m := range s.Columns {
				ov, ok1 := o.Median[m]
				nv, ok2 := r.Median[m]
				if !ok1 || !ok2 {
					continue
				}
				d := Delta{Scenario: s.Name, System: r.label(), Metric: m, Old: ov, New: nv, Change: math.NaN()}
				if ov != 0 {
					d.Change = (nv - ov) / ov * 100
				}
				d.Significant = !overlap(runValues(o.Runs, m), runValues(r.Runs, m))
				switch dir := better[m]; {
				case dir == 0 || nv == ov:
				case (nv > ov) == (dir > 0):
					d.Verdict = "better"
				default:
					d.Verdict = "worse"
				}
				ds = append(ds, d)
			}
		}
	}
	return ds
}

func runValues(runs []Sample, m string) []float64 {
	var vs []float64
	for _, s := range runs {
		if v, ok := s[m]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// overlap reports whether the ranges of a and b intersect; with fewer than two values on a side
// nothing can be told from noise, so it counts as overlapping.
func overlap(a, b []float64) bool {
	if len(a) < 2 || len(b) < 2 {
		return true
	}
	return slices.Min(a) <= slices.Max(b) && slices.Min(b) <= slices.Max(a)
}

// WriteComparison prints deltas as a table in the manner of benchstat.
func WriteComparison(w io.Writer, oldName, newName string, ds []Delta) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tsystem\tmetric\t%s\t%s\tdelta\t\n", oldName, newName)
	for _, d := range ds {
		change := "~"
		switch {
		case math.IsNaN(d.Change):
			change = "n/a"
		case d.Significant && d.Verdict != "":
			change = fmt.Sprintf("%+.1f%% (%s)", d.Change, d.Verdict)
		case d.Significant:
			change = fmt.Sprintf("%+.1f%%", d.Change)
		default:
			change = fmt.Sprintf("~ (%+.1f%%, runs overlap)", d.Change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", d.Scenario, d.System, d.Metric, FormatNumber(d.Old), FormatNumber(d.New), change)
	}
	return tw.Flush()
}
