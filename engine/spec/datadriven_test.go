package spec

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata files")

// testCase is one testdata file: leading "#" comment lines, then sections separated by lines
// of exactly "----"; the last section is the expected output.
type testCase struct {
	path     string
	comments []string
	sections []string
}

func readCase(t *testing.T, path string) *testCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCase{path: path}
	text := string(b)
	for strings.HasPrefix(text, "#") {
		line, rest, _ := strings.Cut(text, "\n")
		tc.comments = append(tc.comments, line)
		text = rest
	}
	tc.sections = strings.Split(text, "\n----\n")
	return tc
}

// check compares got with the expected section, or rewrites it with -rewrite. An expected
// line ending in "..." matches any line it is a prefix of: cases use it for messages that
// tick and engine/schema write, so that their wording can change while the pointer and
// position, which this package computes, stay checked. Rewriting keeps such lines.
func (tc *testCase) check(t *testing.T, got string) {
	t.Helper()
	wantLines := splitLines(tc.sections[len(tc.sections)-1])
	gotLines := splitLines(got)
	match := func(w, g string) bool {
		if p, ok := strings.CutSuffix(w, "..."); ok {
			return strings.HasPrefix(g, p)
		}
		return w == g
	}
	if *rewrite {
		for i, g := range gotLines {
			if i < len(wantLines) && match(wantLines[i], g) {
				gotLines[i] = wantLines[i]
			}
		}
		var b strings.Builder
		for _, c := range tc.comments {
			b.WriteString(c + "\n")
		}
		b.WriteString(strings.Join(tc.sections[:len(tc.sections)-1], "\n----\n"))
		b.WriteString("\n----\n")
		for _, g := range gotLines {
			b.WriteString(g + "\n")
		}
		if err := os.WriteFile(tc.path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	ok := len(gotLines) == len(wantLines)
	for i := 0; ok && i < len(gotLines); i++ {
		ok = match(wantLines[i], gotLines[i])
	}
	if !ok {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.path, strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func splitLines(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func formatReport(r *Report) string {
	var b strings.Builder
	for _, is := range r.Errors {
		fmt.Fprintf(&b, "error %s\n", is)
	}
	for _, is := range r.Warnings {
		fmt.Fprintf(&b, "warning %s\n", is)
	}
	return b.String()
}

// TestLoadData runs testdata/load: a spec, then the errors and warnings Load reports, each as
// "error|warning line:col: pointer: message". No output means the spec loads cleanly.
func TestLoadData(t *testing.T) {
	files, _ := filepath.Glob("testdata/load/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata/load files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			tc := readCase(t, f)
			if len(tc.sections) != 2 {
				t.Fatalf("%s: want a spec and an expected section, got %d sections", f, len(tc.sections))
			}
			s, rep := Load([]byte(tc.sections[0]))
			if rep.OK() != (s != nil) {
				t.Fatalf("%s: Report.OK()=%v but Spec nil=%v", f, rep.OK(), s == nil)
			}
			tc.check(t, formatReport(rep))
		})
	}
}

// TestCompatData runs testdata/compat: a first line "prod=BOOL force=BOOL", the deployed spec,
// the new spec, then the issues CheckCompat reports.
func TestCompatData(t *testing.T) {
	files, _ := filepath.Glob("testdata/compat/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata/compat files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			tc := readCase(t, f)
			if len(tc.sections) != 3 {
				t.Fatalf("%s: want deployed spec, new spec and expected output, got %d sections", f, len(tc.sections))
			}
			head, prevText, _ := strings.Cut(tc.sections[0], "\n")
			var prod, force bool
			if _, err := fmt.Sscanf(head, "prod=%t force=%t", &prod, &force); err != nil {
				t.Fatalf("%s: first line %q: %v", f, head, err)
			}
			prev, rep := Load([]byte(prevText))
			if !rep.OK() {
				t.Fatalf("%s: deployed spec does not load:\n%s", f, formatReport(rep))
			}
			next, rep := Load([]byte(tc.sections[1]))
			if !rep.OK() {
				t.Fatalf("%s: new spec does not load:\n%s", f, formatReport(rep))
			}
			var b strings.Builder
			for _, is := range CheckCompat(prev, next, force, prod) {
				fmt.Fprintf(&b, "blocked %s\n", is)
			}
			tc.check(t, b.String())
		})
	}
}
