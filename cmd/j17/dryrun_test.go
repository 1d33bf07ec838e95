package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsDryRunImplications runs the cases of testdata/dryrun/cases.json: each runs
// `j17 events dry-run` with its arguments (files relative to testdata/dryrun) and must exit
// with code and print exactly <name>.stdout and <name>.stderr. The cases follow the
// Implications guide: inventory reservation with map, a map condition, a scheduled implication
// with cancel_on, a pipeline with a conditional step, chains, and max_total and max_depth
// exceeded (the event and all it implies refused).
func TestEventsDryRunImplications(t *testing.T) {
	dir := filepath.Join("testdata", "dryrun")
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name string   `json:"name"`
		Args []string `json:"args"`
		Code int      `json:"code"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			args := []string{"dry-run"}
			for _, a := range c.Args {
				if strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".jsonl") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			var stdout, stderr bytes.Buffer
			if code := cmdEvents(args, &stdout, &stderr); code != c.Code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, c.Code, stderr.String())
			}
			for _, out := range []struct {
				ext string
				got string
			}{{".stdout", stdout.String()}, {".stderr", stderr.String()}} {
				want, err := os.ReadFile(filepath.Join(dir, c.Name+out.ext))
				if err != nil {
					t.Fatal(err)
				}
				if out.got != string(want) {
					t.Errorf("%s:\n%s\nwant (%s%s):\n%s", out.ext, out.got, c.Name, out.ext, want)
				}
			}
		})
	}
}

func TestEventsDryRunBadLimits(t *testing.T) {
	for _, args := range [][]string{
		{"dry-run", "--implication-max-total", "0", "a.json", "b.jsonl"},
		{"dry-run", "--implication-max-depth", "-1", "a.json", "b.jsonl"},
		{"dry-run", "--implication-max-depth", "x", "a.json", "b.jsonl"},
	} {
		var stdout, stderr bytes.Buffer
		if code := cmdEvents(args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "implication-max") {
			t.Errorf("%v: exit %d, stderr %q; want usage exit naming the flag", args, code, stderr.String())
		}
	}
}
