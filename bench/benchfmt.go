package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteBenchfmt writes every run of every row in the Go benchmark format, one line per run, so
// that the standard benchstat tool can compare two results files as well (a scenario's
// reference rows are named .../reference/system=...):
//
//	BenchmarkWrite/conns=16/system=j17 1 12345 events/s 0.41 p50_ms ...
func WriteBenchfmt(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "commit: %s\ncpu: %s\n", rep.Commit, rep.Machine.CPU)
	write := func(name string, r Row) {
		for _, run := range r.Runs {
			b.WriteString(name + " 1")
			for _, m := range slices.Sorted(maps.Keys(run)) {
				fmt.Fprintf(&b, " %g %s", run[m], m)
			}
			b.WriteString("\n")
		}
	}
	for _, s := range rep.Scenarios {
		prefix := "Benchmark" + strings.ToUpper(s.Name[:1]) + s.Name[1:]
		for _, r := range s.Rows {
			write(prefix+"/system="+benchName(r.label()), r)
		}
		for _, r := range s.Reference {
			write(prefix+"/reference/system="+benchName(r.label()), r)
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
