package e2e

import (
	"encoding/json"
	"fmt"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// caseFile is one file of testdata/cases: the cases of one documentation page.
type caseFile struct {
	Page  string     `json:"page"`
	Cases []caseSpec `json:"cases"`
}

// caseSpec is one documented example or error, as one or more requests in order.
type caseSpec struct {
	Name string `json:"name"`
	// Source is "Page § Section", or "inferred" with Basis naming what the case is inferred from.
	Source string `json:"source"`
	Basis  string `json:"basis,omitempty"`
	// Env is the environment whose keys the case uses (default prod).
	Env   string     `json:"env,omitempty"`
	Steps []caseStep `json:"steps"`
}

type caseStep struct {
	Request caseRequest `json:"request"`
	Expect  caseExpect  `json:"expect"`
	// Capture names values of the answer for later steps: variable name -> dotted body path.
	Capture map[string]string `json:"capture,omitempty"`
}

type caseRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Auth is write (default), read, none, invalid, operator (the operator token with the
	// instance and environment headers) or jwt (the operator token alone).
	Auth string `json:"auth,omitempty"`
	// Env overrides the case's environment for this request's key.
	Env  string `json:"env,omitempty"`
	Host string `json:"host,omitempty"`
	// Headers maps a name to one value or to a list of values (one header line each).
	Headers map[string]json.RawMessage `json:"headers,omitempty"`
	// Body is sent as JSON; RawBody is sent as it is written.
	Body    json.RawMessage `json:"body,omitempty"`
	RawBody *string         `json:"raw_body,omitempty"`
	// ContentType overrides application/json; "" sends none.
	ContentType *string `json:"content_type,omitempty"`
}

type caseExpect struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`
}

func loadCaseFiles(t *testing.T) map[string]caseFile {
	t.Helper()
	paths, err := filepath.Glob("testdata/cases/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no case files in testdata/cases: %v", err)
	}
	files := map[string]caseFile{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f caseFile
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, c := range f.Cases {
			if c.Name == "" || c.Source == "" || len(c.Steps) == 0 {
				t.Fatalf("%s: case %q needs a name, a source and steps", p, c.Name)
			}
			if c.Source == "inferred" && c.Basis == "" {
				t.Fatalf("%s: inferred case %q needs a basis", p, c.Name)
			}
		}
		files[strings.TrimSuffix(filepath.Base(p), ".json")] = f
	}
	return files
}

// TestDocumentedCases runs every case of testdata/cases against the shared server.
func TestDocumentedCases(t *testing.T) {
	files := loadCaseFiles(t)
	f := sharedFixture(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			for _, c := range files[n].Cases {
				t.Run(c.Name, func(t *testing.T) { runCase(t, f, c) })
			}
		})
	}
}

func runCase(t *testing.T, f *fixture, c caseSpec) {
	vars := newVars()
	env := c.Env
	if env == "" {
		env = "prod"
	}
	source := c.Source
	if c.Source == "inferred" {
		source = "inferred from " + c.Basis
	}
	for i, st := range c.Steps {
		req, err := buildCall(f, vars, env, st.Request)
		if err != nil {
			t.Fatalf("case %q (%s) step %d: %v", c.Name, source, i+1, err)
		}
		start := time.Now().Unix()
		r := do(f.srv.url(), req)
		vars.window = [2]int64{start - 2, time.Now().Unix() + 2}
		problems := checkReply(vars, st.Expect, r)
		if len(problems) > 0 {
			want, _ := json.Marshal(vars.expand(st.Expect.Body))
			t.Fatalf("case %q (%s) step %d of %d\n  request: %s\n  got:  %s\n  want: status %d, body fields %s\n  mismatches:\n    %s",
				c.Name, source, i+1, len(c.Steps), req, r, st.Expect.Status, want, strings.Join(problems, "\n    "))
		}
		for name, path := range st.Capture {
			v, ok := lookup(r.JSON, path)
			if !ok {
				t.Fatalf("case %q step %d: cannot capture %s: no %q in %s", c.Name, i+1, name, path, r)
			}
			vars.captured[name] = v
		}
	}
}

// buildCall turns a case request into a call, filling in placeholders and credentials.
func buildCall(f *fixture, vars *vars, env string, cr caseRequest) (call, error) {
	if cr.Env != "" {
		env = cr.Env
	}
	c := call{Method: cr.Method, Path: vars.expandString(cr.Path), Header: map[string][]string{}}
	if cr.Host != "" {
		c.Host = vars.expandString(cr.Host)
	}
	switch cr.Auth {
	case "", "write", "read":
		scope := cr.Auth
		if scope == "" {
			scope = "write"
		}
		c.Header["Authorization"] = []string{"Bearer " + f.keys[env][scope]}
	case "invalid":
		c.Header["Authorization"] = []string{"Bearer j17_0_" + env + "_notarealkey0000000000000000"}
	case "operator":
		c.Header["Authorization"] = []string{"Bearer " + f.token}
		c.Header["X-J17-Instance"] = []string{instanceName}
		c.Header["X-J17-Environment"] = []string{env}
	case "jwt":
		c.Header["Authorization"] = []string{"Bearer " + f.token}
	case "none":
	default:
		return c, fmt.Errorf("unknown auth %q", cr.Auth)
	}
	for name, raw := range cr.Headers {
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			c.Header[name] = []string{vars.expandString(one)}
		case json.Unmarshal(raw, &many) == nil:
			for _, v := range many {
				c.Header[name] = append(c.Header[name], vars.expandString(v))
			}
		default:
			return c, fmt.Errorf("header %s: want a string or a list of strings", name)
		}
	}
	switch {
	case cr.RawBody != nil:
		c.Body = []byte(vars.expandString(*cr.RawBody))
	case cr.Body != nil:
		var v any
		if err := json.Unmarshal(cr.Body, &v); err != nil {
			return c, err
		}
		b, err := json.Marshal(vars.expand(v))
		if err != nil {
			return c, err
		}
		c.Body = b
	}
	ct := "application/json"
	if cr.ContentType != nil {
		ct = *cr.ContentType
	}
	if c.Body != nil && ct != "" {
		c.Header["Content-Type"] = []string{ct}
	}
	return c, nil
}

// checkReply compares an answer with a case's expectation and with the rules every answer
// follows (CONTRACT.md): X-Request-Id always; an error envelope with ok false, error and code on
// every 4xx and 5xx; ok true on every success.
func checkReply(v *vars, want caseExpect, r reply) []string {
	if r.Err != nil {
		return []string{r.String()}
	}
	var p []string
	if r.Status != want.Status {
		p = append(p, fmt.Sprintf("status: got %d, want %d", r.Status, want.Status))
	}
	if r.Header.Get("X-Request-Id") == "" {
		p = append(p, "header X-Request-Id: missing (CONTRACT: every response carries it)")
	}
	for name, w := range want.Headers {
		got, present := r.Header[textproto.CanonicalMIMEHeaderKey(name)]
		switch w {
		case "$absent":
			if present {
				p = append(p, fmt.Sprintf("header %s: got %q, want absent", name, got))
			}
		case "$present":
			if !present || got[0] == "" {
				p = append(p, fmt.Sprintf("header %s: missing", name))
			}
		default:
			if !present || got[0] != v.expandString(w) {
				p = append(p, fmt.Sprintf("header %s: got %q, want %q", name, got, v.expandString(w)))
			}
		}
	}
	body := r.obj()
	if body == nil {
		return append(p, "body: not a JSON object")
	}
	if r.Status >= 400 {
		p = append(p, match("body", body, map[string]any{"ok": false, "error": "$string", "code": "$string"}, v)...)
	} else {
		p = append(p, match("body", body, map[string]any{"ok": true}, v)...)
	}
	if want.Body != nil {
		p = append(p, match("body", body, want.Body, v)...)
	}
	return p
}
