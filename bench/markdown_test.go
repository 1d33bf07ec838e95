package bench

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The report of testdata/report.json renders as testdata/report.md.
func TestWriteMarkdownGolden(t *testing.T) {
	rep, err := ReadReport("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, rep, true); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/report.md", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/report.md")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("markdown differs from testdata/report.md (run with -update to accept):\ngot:\n%s", b.String())
	}
}

func TestMedianOfRuns(t *testing.T) {
	r := Row{Runs: []Sample{{"x": 3, "y": 1}, {"x": 1, "y": 2}, {"x": 2}, {"x": 10, "y": 4}}}
	r.median()
	if r.Median["x"] != 2.5 || r.Median["y"] != 2 {
		t.Errorf("got x=%v y=%v, want x=2.5 (even count) y=2 (runs lacking y skipped)", r.Median["x"], r.Median["y"])
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {123456.7, "123457"}, {12.345, "12.35"}, {0.01234, "0.012"}, {-250, "-250"}} {
		if got := FormatNumber(tc.v); got != tc.want {
			t.Errorf("FormatNumber(%v): got %q, want %q", tc.v, got, tc.want)
		}
	}
}

// A round's price pairs the round's two runs; rounds missing a run, or a run without requests,
// give no prices at all rather than pairs taken minutes apart.
func TestRoundCosts(t *testing.T) {
	ev := func(vs ...float64) []Sample {
		out := make([]Sample, len(vs))
		for i, v := range vs {
			out[i] = Sample{MetricEventsPerSec: v}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		runs, ref []Sample
		want      []float64
	}{
		{"paired", ev(1100, 2200, 550), ev(200, 300, 100), []float64{2, 1.5, 2}},
		{"a round without its reference", ev(1100, 2200), ev(200), nil},
		{"a run without requests", ev(1100, 0), ev(200, 300), nil},
		{"a reference run without events", ev(1100, 2200), ev(200, 0), nil},
	} {
		if got := roundCosts(tc.runs, tc.ref, 11); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
