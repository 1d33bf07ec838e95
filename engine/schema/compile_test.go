package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

type ruleCase struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Issues []struct {
		Pointer string `json:"pointer"`
		Says    string `json:"says"`
	} `json:"issues"`
}

// TestKeywordRules checks the rules j17 adds to Draft 2020-12: which keywords and references a
// schema may not use, where each violation is reported, and that the message says what to use.
func TestKeywordRules(t *testing.T) {
	var cases []ruleCase
	readCases(t, "testdata/keyword_rules.json", &cases)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s, issues := Compile(tc.Schema)
			if len(tc.Issues) == 0 {
				if issues != nil || s == nil {
					t.Fatalf("got issues %v, want the schema accepted", issues)
				}
				return
			}
			if s != nil {
				t.Fatalf("got a compiled schema, want issues %v", tc.Issues)
			}
			if len(issues) != len(tc.Issues) {
				t.Fatalf("got %d issues %v, want %d", len(issues), issues, len(tc.Issues))
			}
			for i, want := range tc.Issues {
				if issues[i].Pointer != want.Pointer || !strings.Contains(issues[i].Message, want.Says) {
					t.Errorf("issue %d: got %q %q, want pointer %q and a message containing %q", i, issues[i].Pointer, issues[i].Message, want.Pointer, want.Says)
				}
			}
		})
	}
}

func TestCompileRejectsMalformedJSON(t *testing.T) {
	s, issues := Compile([]byte(`{"type":`))
	if s != nil || len(issues) != 1 || issues[0].Pointer != "" {
		t.Fatalf("got %v %v, want one issue at the root", s, issues)
	}
}

// TestContentKeywordsDoNotConstrain checks that the content keywords are annotations only.
func TestContentKeywordsDoNotConstrain(t *testing.T) {
	s, issues := Compile([]byte(`{"type":"string","contentEncoding":"base64","contentMediaType":"application/json","contentSchema":{"required":["x"]}}`))
	if issues != nil {
		t.Fatal(issues)
	}
	if err := s.ValidateJSON([]byte(`"not base64 and not json!"`)); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}

type exampleCase struct {
	Name    string            `json:"name"`
	Schema  json.RawMessage   `json:"schema"`
	Valid   []json.RawMessage `json:"valid"`
	Invalid []json.RawMessage `json:"invalid"`
}

// TestPageExamples compiles every schema example of the JSON Schema and Spec pages and checks
// data the example's text says it accepts or rejects.
func TestPageExamples(t *testing.T) {
	var cases []exampleCase
	readCases(t, "testdata/page_examples.json", &cases)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s, issues := Compile(tc.Schema)
			if issues != nil {
				t.Fatalf("compile: %v", issues)
			}
			for _, d := range append(tc.Valid, tc.Invalid...) {
				checkFastAgrees(t, s, d, tc.Name)
			}
			for _, d := range tc.Valid {
				if err := s.ValidateJSON(d); err != nil {
					t.Errorf("%s: got %v, want valid", d, err)
				}
			}
			for _, d := range tc.Invalid {
				if err := s.ValidateJSON(d); err == nil {
					t.Errorf("%s: got valid, want a failure", d)
				}
			}
		})
	}
}

// TestLoaderRefusesEveryURL checks the compiler's only way out of the document.
func TestLoaderRefusesEveryURL(t *testing.T) {
	for _, u := range []string{"file:///etc/passwd", "https://example.com/schema.json", "urn:x"} {
		if doc, err := (refusingLoader{}).Load(u); err == nil || doc != nil {
			t.Errorf("%s: got %v, %v, want a refusal", u, doc, err)
		}
	}
}
