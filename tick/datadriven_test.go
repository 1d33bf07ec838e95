package tick

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files under testdata/docs hold one case per example of the Tick,
// Handlers, JSONPath and Implications Reference pages. A case is
//
//	<command> <name>
//	<JSON input, one or more lines>
//	----
//	<expected output>
//	<blank line>
//
// The expected outputs are taken from the documentation; -rewrite replaces
// them with what the code produces, for review with git diff.
var rewrite = flag.Bool("rewrite", false, "rewrite expected outputs in testdata/docs")

type ddCase struct {
	file, cmd, name string
	line            int
	input, want     string
}

func readCases(t *testing.T, path string) []ddCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []ddCase
	var cur *ddCase
	inWant := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil:
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cmd, name, _ := strings.Cut(line, " ")
			cases = append(cases, ddCase{file: path, cmd: cmd, name: name, line: n})
			cur = &cases[len(cases)-1]
			inWant = false
		case line == "----" && !inWant:
			inWant = true
		case inWant && line == "":
			cur = nil
		case inWant:
			cur.want += line + "\n"
		default:
			cur.input += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestDocs(t *testing.T) {
	files, err := filepath.Glob("testdata/docs/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	for _, file := range files {
		cases := readCases(t, file)
		var out strings.Builder
		for _, c := range cases {
			got := runCase(c)
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txt")+"/"+c.name, func(t *testing.T) {
				if !*rewrite && !sameOutput(got, c.want) {
					t.Errorf("%s:%d %s %s\ninput:\n%sgot:\n%s\nwant:\n%s", c.file, c.line, c.cmd, c.name, c.input, got, c.want)
				}
			})
			fmt.Fprintf(&out, "%s %s\n%s----\n%s\n\n", c.cmd, c.name, c.input, strings.TrimRight(got, "\n"))
		}
		if *rewrite {
			if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sameOutput compares JSON outputs by value (member order aside) and any
// other output as text.
func sameOutput(got, want string) bool {
	got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	if got == want {
		return true
	}
	g, err1 := ParseJSON([]byte(got))
	w, err2 := ParseJSON([]byte(want))
	return err1 == nil && err2 == nil && Equal(g, w)
}

func runCase(c ddCase) string {
	in, err := ParseJSON([]byte(c.input))
	if err != nil {
		return "bad case input: " + err.Error()
	}
	out, err := runCommand(c.cmd, in)
	if err != nil {
		var es Errors
		var e *Error
		switch {
		case errors.As(err, &es):
			lines := make([]string, len(es))
			for i, x := range es {
				lines[i] = "error: " + x.Error()
			}
			return strings.Join(lines, "\n")
		case errors.As(err, &e):
			return "error: " + e.Error()
		}
		return "error: " + err.Error()
	}
	return out
}

func caseEvent(v Value) *Event {
	ev := &Event{Type: "test", Data: v.Get("data"), Metadata: v.Get("metadata")}
	if v.kind == KindObject {
		_ = eventFromValue(Object(append([]Member{{Key: "type", Value: String("test")}}, v.Members()...)...), ev)
	}
	return ev
}

func caseScope(in Value) *Scope {
	s := &Scope{
		Event:   caseEvent(in.Get("event")),
		State:   in.Get("state"),
		Prev:    in.Get("prev"),
		Context: in.Get("context"),
		Error:   in.Get("error"),
		Extra:   in.Get("extra"),
	}
	for _, m := range in.Get("bindings").Members() {
		s.Bind(m.Key, m.Value)
	}
	return s
}

func caseOptions(v Value) TemplateOptions {
	o := TemplateOptions{Prev: v.Get("prev").Bool(), Context: v.Get("context").Bool(), Error: v.Get("error").Bool(),
		Item: v.Get("item").Bool(), Wildcard: v.Get("wildcard").Bool()}
	for _, b := range v.Get("bindings").Items() {
		o.Bindings = append(o.Bindings, b.Str())
	}
	return o
}

func runCommand(cmd string, in Value) (string, error) {
	switch cmd {
	case "apply", "replay":
		handlers := map[string]*Handler{}
		if h := in.Get("handler"); !h.IsMissing() {
			ch, err := CompileHandlerValue(h)
			if err != nil {
				return "", err
			}
			handlers["test"] = ch
		}
		for _, m := range in.Get("handlers").Members() {
			ch, err := CompileHandlerValue(m.Value)
			if err != nil {
				return "", err
			}
			handlers[m.Key] = ch
		}
		state := in.Get("state")
		if cmd == "apply" {
			return handlers["test"].mustRun(state, caseEvent(in.Get("event")))
		}
		rp := NewReplayer(handlers, state)
		for _, ev := range in.Get("events").Items() {
			if err := rp.Apply(caseEvent(ev)); err != nil {
				return "", err
			}
		}
		return rp.State().String(), nil
	case "compile":
		if _, err := CompileHandlerValue(in.Get("handler")); err != nil {
			return "", err
		}
		return "ok", nil
	case "path":
		p, err := parseCasePath(in)
		if err != nil {
			return "", err
		}
		var v Value
		if doc := in.Get("doc"); !doc.IsMissing() {
			v = p.ResolveIn(doc)
		} else {
			v = p.Resolve(caseScope(in))
		}
		if v.IsMissing() {
			return "not found", nil
		}
		return v.String(), nil
	case "predicate":
		p, err := CompilePredicate([]byte(in.Get("predicate").String()))
		if err != nil {
			return "", err
		}
		ok, err := p.Eval(caseScope(in))
		return fmt.Sprint(ok), err
	case "template":
		t, err := CompileTemplateValue(in.Get("template"), caseOptions(in.Get("options")))
		if err != nil {
			return "", err
		}
		v, err := t.Eval(caseScope(in))
		if err := sameAppendJSON(t, caseScope(in), v, err); err != nil {
			return "", err
		}
		if err != nil {
			return "", err
		}
		if v.IsMissing() {
			return "not found", nil
		}
		return v.String(), nil
	case "map":
		return runMap(in)
	case "emit":
		opts := caseOptions(in.Get("options"))
		s := caseScope(in)
		if c := in.Get("condition"); !c.IsMissing() {
			p, err := CompilePredicateWith([]byte(c.String()), opts)
			if err != nil {
				return "", err
			}
			if ok, err := p.Eval(s); err != nil || !ok {
				return "skipped", err
			}
		}
		t, err := CompileTemplateValue(in.Get("emit"), opts)
		if err != nil {
			return "", err
		}
		v, err := t.Eval(s)
		if err := sameAppendJSON(t, s, v, err); err != nil {
			return "", err
		}
		return v.String(), err
	}
	return "", fmt.Errorf("unknown command %q", cmd)
}

// sameAppendJSON checks that Template.AppendJSON gives what Eval gave (v, err) written with
// Value.AppendJSON, and returns an error that fails the case where it does not.
func sameAppendJSON(t *Template, s *Scope, v Value, err error) error {
	got, kind, gotErr := t.AppendJSON([]byte("prefix"), s)
	if fmt.Sprint(gotErr) != fmt.Sprint(err) {
		return fmt.Errorf("AppendJSON: error %v, Eval: %v", gotErr, err)
	}
	want := v.AppendJSON([]byte("prefix"))
	if v.IsMissing() {
		want = []byte("prefix")
	}
	if err == nil && (kind != v.Kind() || string(got) != string(want)) {
		return fmt.Errorf("AppendJSON: %s (%s), Eval: %s (%s)", got, kind, want, v.Kind())
	}
	return nil
}

func parseCasePath(in Value) (Path, error) {
	if in.Get("wildcard").Bool() {
		return ParseSourcePath(in.Get("path").Str())
	}
	return ParsePath(in.Get("path").Str())
}

func (h *Handler) mustRun(state Value, ev *Event) (string, error) {
	if h == nil {
		return "", errors.New("case has no handler")
	}
	v, err := h.Run(state, ev)
	if err != nil {
		return "", err
	}
	if v.IsMissing() {
		return "not found", nil
	}
	return v.String(), nil
}

// runMap plays an implication's map: "in" is resolved, "condition" filters
// the items and "emit" is evaluated once per item with the "as" binding.
func runMap(in Value) (string, error) {
	m := in.Get("map")
	as := m.Get("as").Str()
	opts := TemplateOptions{Bindings: []string{as}}
	src, err := CompileTemplateValue(m.Get("in"), opts)
	if err != nil {
		return "", err
	}
	emit, err := CompileTemplateValue(m.Get("emit"), opts)
	if err != nil {
		return "", err
	}
	var cond *Predicate
	if c := m.Get("condition"); !c.IsMissing() {
		if cond, err = CompilePredicateWith([]byte(c.String()), opts); err != nil {
			return "", err
		}
	}
	s := caseScope(in)
	arr, err := src.Eval(s)
	if err != nil {
		return "", err
	}
	var out []Value
	for _, it := range arr.Items() {
		s.Bindings = []Binding{{Name: as, Value: it}}
		if cond != nil {
			ok, err := cond.Eval(s)
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
		}
		v, err := emit.Eval(s)
		if err != nil {
			return "", err
		}
		out = append(out, v)
	}
	return Array(out...).String(), nil
}
