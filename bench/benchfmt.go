package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteBenchfmt writes every run of every row in the Go benchmark format, one line per run, so
// that the standard benchstat tool can compare two results files as well:
//
//	BenchmarkWrite/conns=16/system=j17 1 12345 events/s 0.41 p50_ms ...
func WriteBenchfmt(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "commit: %s\ncpu: %s\n", rep.Commit, rep.Machine.CPU)
	for _, s := range rep.Scenarios {
		for _, r := range s.Rows {
			name := "Benchmark" + strings.ToUpper(s.Name[:1]) + s.Name[1:] + "/system=" + benchName(r.label())
			for _, run := range r.Runs {
				b.WriteString(name + " 1")
				for _, m := range slices.Sorted(maps.Keys(run)) {
					fmt.Fprintf(&b, " %g %s", run[m], m)
				}
				b.WriteString("\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName makes a label fit in one field of a benchmark line.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', ',', ':', '(', ')':
			return '_'
		}
		return r
	}, s)
}
