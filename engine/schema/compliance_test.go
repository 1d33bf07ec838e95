package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// suiteDir is the official JSON Schema Test Suite, Draft 2020-12, shared by the project.
const suiteDir = "../../../shared/testdata/json-schema-test-suite/tests/draft2020-12"

// assertedFormats are the formats the JSON Schema page lists. Files of the optional format suite
// for other formats run too: their valid cases must pass, their invalid cases are skipped because
// j17 treats those formats as annotations.
var assertedFormats = []string{
	"email", "date-time", "date", "time", "uri", "uri-reference", "uuid",
	"hostname", "ipv4", "ipv6", "regex", "json-pointer", "ecmascript-regex", "unknown",
}

// knownFailures lists every case the suite expects otherwise, keyed "file|group|test" ("*" for
// all), with the reason. A listed case that starts passing fails the test, so the list stays true.
var knownFailures = map[string]string{
	"format.json|*|*": "tests format as an annotation; j17 asserts format (the optional/format files run instead)",
}

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

type suiteCount struct {
	passed, skipped, failed, known int
	skipReasons                    []string
}

func TestCompliance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(suiteDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files in %s: %v", suiteDir, err)
	}
	formats, _ := filepath.Glob(filepath.Join(suiteDir, "optional", "format", "*.json"))
	files = append(files, formats...)

	used := map[string]bool{}
	var total suiteCount
	var table strings.Builder
	for _, file := range files {
		name, _ := filepath.Rel(suiteDir, file)
		var c suiteCount
		t.Run(name, func(t *testing.T) { c = runSuiteFile(t, file, name, used) })
		total.passed += c.passed
		total.skipped += c.skipped
		total.failed += c.failed
		total.known += c.known
		table.WriteString(suiteRow(name, c))
	}
	table.WriteString(suiteRow("TOTAL", total))
	t.Logf("\n%-44s %6s %7s %6s %5s\n%s", "file", "passed", "skipped", "failed", "known", table.String())
	for key := range knownFailures {
		if !used[key] {
			t.Errorf("known failure %q matched no failing case: remove it from the list", key)
		}
	}
}

func suiteRow(name string, c suiteCount) string {
	row := fmt.Sprintf("%-44s %6d %7d %6d %5d", name, c.passed, c.skipped, c.failed, c.known)
	if len(c.skipReasons) > 0 {
		slices.Sort(c.skipReasons)
		row += "  skipped for: " + strings.Join(c.skipReasons, ", ")
	}
	return row + "\n"
}

// skipReason names what a refused group needed.
func skipReason(is Issue) string {
	kw := is.Pointer[strings.LastIndexByte(is.Pointer, '/')+1:]
	switch {
	case kw == "$ref" && strings.Contains(is.Message, "not a local reference"):
		return "$ref not a #-pointer (remote or $id-relative)"
	case kw == "$ref":
		return "$ref to an $anchor"
	case kw == "$schema":
		return "a remote $schema metaschema (remote loading refused)"
	}
	return kw
}

func runSuiteFile(t *testing.T, file, name string, used map[string]bool) suiteCount {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var groups []suiteGroup
	if err := json.Unmarshal(raw, &groups); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	format := strings.TrimSuffix(filepath.Base(name), ".json")
	annotationOnly := strings.HasPrefix(name, "optional/") && !slices.Contains(assertedFormats, format)

	var c suiteCount
	for _, g := range groups {
		doc, err := decodeJSON(g.Schema)
		if err != nil {
			t.Fatalf("%s / %s: schema: %v", name, g.Description, err)
		}
		if issues := checkKeywords(doc); len(issues) > 0 {
			// The group needs a keyword or a reference j17 refuses by design.
			c.skipped += len(g.Tests)
			for _, is := range issues {
				if r := skipReason(is); !slices.Contains(c.skipReasons, r) {
					c.skipReasons = append(c.skipReasons, r)
				}
			}
			continue
		}
		s, issues := compileDoc(doc)
		for _, tc := range g.Tests {
			var got bool
			var why string
			if s == nil {
				why = "compile: " + issues[0].Pointer + ": " + issues[0].Message
			} else {
				err := s.ValidateJSON(tc.Data)
				got = err == nil
				if err != nil {
					why = err.Error()
				}
				checkFastAgrees(t, s, tc.Data, name+" / "+g.Description+" / "+tc.Description)
			}
			switch {
			case got == tc.Valid && s != nil:
				c.passed++
			case annotationOnly && !tc.Valid:
				c.skipped++
				if r := "format " + format + " is an annotation"; !slices.Contains(c.skipReasons, r) {
					c.skipReasons = append(c.skipReasons, r)
				}
			default:
				if key, ok := knownFailure(name, g.Description, tc.Description); ok {
					used[key] = true
					c.known++
					continue
				}
				c.failed++
				t.Errorf("%s / %s / %s: got valid=%v, want valid=%v (%s)", name, g.Description, tc.Description, got, tc.Valid, why)
			}
		}
	}
	return c
}

func knownFailure(file, group, test string) (string, bool) {
	for _, key := range []string{file + "|" + group + "|" + test, file + "|" + group + "|*", file + "|*|*"} {
		if _, ok := knownFailures[key]; ok {
			return key, true
		}
	}
	return "", false
}

// checkFastAgrees fails the test when the fast path or the raw path disagrees with the
// compiler's validator.
func checkFastAgrees(t *testing.T, s *Schema, raw []byte, what string) {
	t.Helper()
	if s.fast == nil {
		return
	}
	v, err := decodeJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	fast, lib := s.fast.valid(v), s.compiled.Validate(v) == nil
	if fast != lib {
		t.Errorf("%s: fast path says valid=%v, compiler's validator says valid=%v", what, fast, lib)
	}
	if rawOK := s.validRaw(raw); rawOK != lib {
		t.Errorf("%s: raw path says valid=%v, compiler's validator says valid=%v", what, rawOK, lib)
	}
	if _, isObject := v.(map[string]any); isObject && s.AcceptsEveryObject() && !lib {
		t.Errorf("%s: AcceptsEveryObject, but the compiler's validator refuses this object", what)
	}
}
