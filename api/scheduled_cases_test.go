package api

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine"
)

// implicationCase is one documented example of the Implications guide and reference or of the
// Scheduled Events page, as requests in order against a server running testdata/implications/spec.json.
type implicationCase struct {
	Name   string             `json:"name"`
	Source string             `json:"source"`
	Steps  []implicationStep  `json:"steps"`
	Limits *engineLimitsInput `json:"limits,omitempty"`
}

type engineLimitsInput struct {
	MaxDepth int `json:"max_depth"`
	MaxTotal int `json:"max_total"`
}

type implicationStep struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Auth is "key" (default: the staging write key), "operator" (operator token with the
	// instance and staging headers) or "operator:<env>".
	Auth   string          `json:"auth,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	Status int             `json:"status"`
	// Expect is matched against the answer: objects as subsets, arrays whole, "$any" for any
	// present value and "$absent" for a missing member.
	Expect json.RawMessage `json:"expect,omitempty"`
	// Capture names values of the answer (dotted paths) for "{{name}}" in later steps.
	Capture map[string]string `json:"capture,omitempty"`
	// Repeat sends the step this many times (default once).
	Repeat int `json:"repeat,omitempty"`
	// Headers are sent as they are, after placeholders are filled.
	Headers map[string]string `json:"headers,omitempty"`
}

var (
	casePlaceholder = regexp.MustCompile(`\{\{([a-z_]+)(?:[:+]([a-z0-9_]+))?\}\}`)
	// caseClock is a quoted clock placeholder, which stands for a number.
	caseClock = regexp.MustCompile(`"(\{\{clock\+[0-9]+\}\})"`)
)

// TestImplicationCases runs testdata/implications/cases.json; each case gets a fresh server.
func TestImplicationCases(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "implications", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []implicationCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(filepath.Join("testdata", "implications", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			opts := engine.Options{NoSync: true, SchedulerPoll: -1}
			if c.Limits != nil {
				opts.Implications.MaxDepth, opts.Implications.MaxTotal = c.Limits.MaxDepth, c.Limits.MaxTotal
			}
			ds := startDataServer(t, "", opts)
			ds.deploy(spec, true)
			vars := map[string]string{}
			for i, st := range c.Steps {
				for n := 0; n < max(st.Repeat, 1); n++ {
					ds.runCaseStep(c, i, st, vars)
				}
			}
		})
	}
}

func (ds *dataServer) runCaseStep(c implicationCase, i int, st implicationStep, vars map[string]string) {
	t := ds.t
	t.Helper()
	path := ds.expandCase(st.Path, vars)
	var body any
	if len(st.Body) > 0 {
		body = []byte(ds.expandCase(string(st.Body), vars))
	}
	var headers []string
	for k, v := range st.Headers {
		headers = append(headers, k, ds.expandCase(v, vars))
	}
	var res response
	switch {
	case st.Auth == "" || st.Auth == "key":
		res = ds.do(st.Method, path, ds.key, body, headers...)
	case strings.HasPrefix(st.Auth, "operator"):
		env := "staging"
		if _, e, ok := strings.Cut(st.Auth, ":"); ok {
			env = e
		}
		res = ds.do(st.Method, path, ds.token, body, append(headers, "X-J17-Instance", "myapp", "X-J17-Environment", env)...)
	default:
		t.Fatalf("case %q step %d: unknown auth %q", c.Name, i+1, st.Auth)
	}
	where := fmt.Sprintf("case %q (%s) step %d: %s %s", c.Name, c.Source, i+1, st.Method, path)
	if res.status != st.Status {
		t.Fatalf("%s: got status %d, want %d; body %s", where, res.status, st.Status, res.raw)
	}
	var got any
	if err := json.Unmarshal(res.raw, &got); err != nil {
		t.Fatalf("%s: answer is not JSON: %s", where, res.raw)
	}
	if len(st.Expect) > 0 {
		var want any
		if err := json.Unmarshal([]byte(ds.expandCase(string(st.Expect), vars)), &want); err != nil {
			t.Fatalf("%s: bad expect: %v", where, err)
		}
		if msg := caseMatch("body", got, want); msg != "" {
			t.Fatalf("%s: %s\nbody: %s", where, msg, res.raw)
		}
	}
	for name, p := range st.Capture {
		v := caseDig(got, p)
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%s: capture %s: %s is %v, not a string", where, name, p, v)
		}
		vars[name] = s
	}
}

// expand fills the placeholders: {{uuid:name}} a v4 UUID per name, {{clock+N}} the test
// clock's Unix seconds plus N, {{name}} a captured value.
func (ds *dataServer) expandCase(s string, vars map[string]string) string {
	s = caseClock.ReplaceAllString(s, "$1")
	return casePlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		g := casePlaceholder.FindStringSubmatch(m)
		switch g[1] {
		case "uuid":
			k := "uuid:" + g[2]
			if vars[k] == "" {
				vars[k] = caseUUID()
			}
			return vars[k]
		case "clock":
			n, _ := strconv.ParseInt(g[2], 10, 64)
			return strconv.FormatInt(ds.clock.Now().Unix()+n, 10)
		}
		v, ok := vars[g[1]]
		if !ok {
			ds.t.Fatalf("casePlaceholder %s has no value", m)
		}
		return v
	})
}

func caseUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// match compares an answer with an expectation and describes the first difference.
func caseMatch(at string, got, want any) string {
	switch w := want.(type) {
	case string:
		if w == "$any" {
			if got == nil {
				return at + ": missing, want any value"
			}
			return ""
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", at, got)
		}
		for k, wv := range w {
			gv, present := g[k]
			if wv == "$absent" {
				if present {
					return fmt.Sprintf("%s.%s: got %v, want it absent", at, k, gv)
				}
				continue
			}
			if !present {
				return fmt.Sprintf("%s.%s: missing, want %v", at, k, wv)
			}
			if msg := caseMatch(at+"."+k, gv, wv); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %d elements %v", at, got, len(w), w)
		}
		for i := range w {
			if msg := caseMatch(fmt.Sprintf("%s[%d]", at, i), g[i], w[i]); msg != "" {
				return msg
			}
		}
		return ""
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		return fmt.Sprintf("%s: got %s, want %s", at, gj, wj)
	}
	return ""
}

// dig follows a dotted path ("data.0.scheduled_id") into a decoded answer.
func caseDig(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
