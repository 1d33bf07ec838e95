package schema

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// messagePrinter renders the compiler's messages in English.
var messagePrinter = message.NewPrinter(language.English)

// Issue is one problem in a schema document, located by a JSON Pointer relative to the schema
// ("" is the schema itself, "/properties/email/format" a keyword inside it).
type Issue struct {
	Pointer string
	Message string
}

// Schema is a compiled event schema. It is immutable and safe for concurrent use.
type Schema struct {
	compiled *jsonschema.Schema
	fast     *node             // nil when the schema has no fast path
	keys     map[string]string // property names, so parsing data need not copy them
}

// resourceURL names the document being compiled; it never leaves this package's messages.
const resourceURL = "urn:j17:schema"

// Compile checks the keyword rules and compiles raw, a JSON Schema document. When the rules are
// broken, every violation is listed at once. Otherwise any other problem the compiler finds (a
// malformed keyword, a bad regular expression, a $ref to nothing) is returned as issues with a
// pointer where the compiler gives one.
func Compile(raw []byte) (*Schema, []Issue) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, []Issue{{Pointer: "", Message: "schema is not valid JSON: " + err.Error()}}
	}
	return compileDoc(doc)
}

func compileDoc(doc any) (*Schema, []Issue) {
	if issues := checkKeywords(doc); len(issues) > 0 {
		return nil, issues
	}
	c := newCompiler()
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, []Issue{{Pointer: "", Message: cleanMessage(err.Error())}}
	}
	compiled, err := c.Compile(resourceURL)
	if err != nil {
		return nil, compileIssues(doc, err)
	}
	useECMARegexFormat(compiled)
	return &Schema{compiled: compiled, fast: buildFast(compiled), keys: propertyNames(compiled)}, nil
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	for _, f := range formatOverrides {
		c.RegisterFormat(f)
	}
	return c
}

// refusingLoader is the compiler's only way to fetch a document it does not already hold, and it
// refuses every URL: a schema can never make the server read a file or open a connection.
type refusingLoader struct{}

func (refusingLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("loading %s refused: schemas cannot reference other documents", u)
}

// compileIssues turns a compiler error into issues, with the pointer of the offending keyword
// where the error names one.
func compileIssues(doc any, err error) []Issue {
	var (
		metaErr  *jsonschema.SchemaValidationError
		regexErr *jsonschema.InvalidRegexError
		ptrErr   *jsonschema.JSONPointerNotFoundError
	)
	switch {
	case errors.As(err, &metaErr):
		var verr *jsonschema.ValidationError
		if errors.As(metaErr.Err, &verr) {
			return metaIssues(verr)
		}
	case errors.As(err, &regexErr):
		return []Issue{{Pointer: fragmentOf(regexErr.URL), Message: fmt.Sprintf("%s is not a valid regular expression (RE2 syntax): %v", strconv.Quote(regexErr.Regex), regexErr.Err)}}
	case errors.As(err, &ptrErr):
		target := "#" + fragmentOf(ptrErr.URL)
		return []Issue{{Pointer: findRef(doc, "", target), Message: "$ref " + strconv.Quote(target) + " points at nothing in this schema: define it under $defs"}}
	}
	return []Issue{{Pointer: "", Message: cleanMessage(err.Error())}}
}

// metaIssues lists the leaves of a metaschema failure; their instance locations are pointers into
// the schema document.
func metaIssues(verr *jsonschema.ValidationError) []Issue {
	var issues []Issue
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			issues = append(issues, Issue{Pointer: pointerOf(e.InstanceLocation), Message: "invalid schema: " + e.ErrorKind.LocalizedString(messagePrinter)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	slices.SortStableFunc(issues, func(a, b Issue) int { return strings.Compare(a.Pointer, b.Pointer) })
	return firstPerPointer(issues)
}

// firstPerPointer keeps one issue per location: the metaschema often explains one mistake
// several ways (each branch of an anyOf), and the first says it best.
func firstPerPointer(issues []Issue) []Issue {
	seen := make(map[string]bool, len(issues))
	out := issues[:0]
	for _, is := range issues {
		if !seen[is.Pointer] {
			seen[is.Pointer] = true
			out = append(out, is)
		}
	}
	return out
}

// findRef returns the pointer of the first $ref in v whose value is target, or "" if none is.
func findRef(v any, ptr, target string) string {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && ref == target {
			return ptr + "/$ref"
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if p := findRef(v[k], ptr+"/"+escapePointer(k), target); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := findRef(e, ptr+"/"+strconv.Itoa(i), target); p != "" {
				return p
			}
		}
	}
	return ""
}

// fragmentOf returns the decoded JSON Pointer fragment of a compiler URL.
func fragmentOf(u string) string {
	_, frag, ok := strings.Cut(u, "#")
	if !ok {
		return ""
	}
	if dec, err := url.PathUnescape(frag); err == nil {
		return dec
	}
	return frag
}

func pointerOf(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escapePointer(t))
	}
	return sb.String()
}

// cleanMessage drops the internal document name from a compiler message.
func cleanMessage(msg string) string {
	msg = strings.ReplaceAll(msg, "'"+resourceURL+"'", "the schema")
	return strings.ReplaceAll(msg, resourceURL, "")
}
