package tick

import (
	"errors"
	"strings"
	"testing"
)

// nest wraps inner in n levels of wrap, where wrap has one %s.
func nest(wrap, inner string, n int) string {
	for range n {
		inner = strings.Replace(wrap, "%s", inner, 1)
	}
	return inner
}

func ops(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = `{"set": {"target": "x", "value": 1}}`
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestCompileHandlerErrors(t *testing.T) {
	ifWrap := `[{"if": {"eq": [1, 1]}, "then": %s}]`
	mergeWrap := `{"$merge": [%s]}`
	for _, tc := range []struct {
		name, handler string
		want          []string // "pointer: message substring", one per error
	}{
		{"not json", `[{`, []string{"malformed JSON"}},
		{"not an array", `"set"`, []string{"operations must be an array"}},
		{"single op object", `{"set": {"target": "a", "value": "$..x"}}`, []string{"/set/value: invalid JSONPath"}},
		{"unknown op", `[{"sett": {}}]`, []string{`/0/sett: unknown operation "sett"`}},
		{"two keys", `[{"set": {"target": "a", "value": 1}, "merge": {}}]`, []string{"/0: an operation is an object with one key"}},
		{"missing fields", `[{"set": {}}]`, []string{`/0/set: set requires "target"`, `/0/set: set requires "value"`}},
		{"unknown field", `[{"append": {"target": "a", "value": 1, "values": 2}}]`, []string{`/0/append/values: unknown field "values"`}},
		{"target prefix", `[{"set": {"target": "@.a", "value": 1}}]`, []string{"/0/set/target: target \"@.a\" is a state path"}},
		{"target empty segment", `[{"set": {"target": "a..b", "value": 1}}]`, []string{"/0/set/target: target \"a..b\" has an empty segment"}},
		{"target not string", `[{"set": {"target": 3, "value": 1}}]`, []string{"/0/set/target: target must be a string"}},
		{"bad path", `[{"set": {"target": "a", "value": "$.items[0"}}]`, []string{`/0/set/value: invalid JSONPath "$.items[0": unclosed "["`}},
		{"unknown binding", `[{"set": {"target": "a", "value": "$adress.street"}}]`, []string{"/0/set/value: unknown binding $adress"}},
		{"prev in handler", `[{"set": {"target": "a", "value": "$prev.type"}}]`, []string{"/0/set/value: $prev is only available in saga steps"}},
		{"remove two modes", `[{"remove": {"target": "a", "value": 1, "where": {"id": 1}}}]`, []string{"/0/remove: remove takes exactly one of"}},
		{"increment both", `[{"increment": {"target": "a", "by": 1, "value": 1}}]`, []string{"/0/increment: increment takes \"by\" or its alias \"value\", not both"}},
		{"increment string", `[{"increment": {"target": "a", "by": "1"}}]`, []string{"/0/increment/by: increment takes a number or a JSONPath, not string"}},
		{"merge literal non-object", `[{"merge": {"target": "a", "value": 5}}]`, []string{"/0/merge/value: the value to merge must be an object"}},
		{"upsert two fields", `[{"upsert": {"target": "a", "match": {"id": 1, "sku": 2}, "value": {}}}]`, []string{"/0/upsert/match: upsert match takes a single"}},
		{"if without then", `[{"if": {"eq": [1, 1]}}]`, []string{`/0: conditional requires "then"`}},
		{"if bad predicate", `[{"if": {"equal": [1, 1]}, "then": []}]`, []string{`/0/if/equal: unknown predicate "equal"`}},
		{"equals one arg", `[{"if": {"equals": [1]}, "then": []}]`, []string{"/0/if/equals: equals takes an array of two values"}},
		{"minItems negative", `[{"if": {"minItems": {"array": "@.a", "min": -1}}, "then": []}]`, []string{"/0/if/minItems/min: must be a non-negative integer"}},
		{"and empty", `[{"if": {"and": []}, "then": []}]`, []string{"/0/if/and: and takes a non-empty array of predicates"}},
		{"exists literal", `[{"if": {"exists": "name"}, "then": []}]`, []string{"/0/if/exists: exists takes a JSONPath string"}},
		{"let bad name", `[{"let": {"name": "address", "find_target": "a", "find_field": "id", "find_value": 1}}]`, []string{"/0/let/name: binding name must be a string like \"$item\""}},
		{"let reserved name", `[{"let": {"name": "$prev", "find": {"in": "a", "where": {"id": 1}}}}]`, []string{"/0/let/name: binding name $prev is reserved"}},
		{"let where two fields", `[{"let": {"name": "$a", "find": {"in": "a", "where": {"id": 1, "b": 2}}}}]`, []string{"/0/let/find/where: where takes a single"}},
		{"map binding out of scope", `[{"map": {"target": "a", "as": "$s", "apply": []}}, {"set": {"target": "b", "value": "$s.x"}}]`, []string{"/1/set/value: unknown binding $s"}},
		{"nesting 6", nest(ifWrap, `[]`, 6), []string{"/0/then/0/then/0/then/0/then/0/then/0/then: operations nested deeper than 5 levels"}},
		{"ops 101", ops(101), []string{"handler has 101 operations; at most 100"}},
		{"ops nested count", `[` + strings.Repeat(`{"if": {"eq": [1, 1]}, "then": [{"set": {"target": "x", "value": 1}}]},`, 50) + `{"set": {"target": "x", "value": 1}}]`, []string{"handler has 101 operations"}},
		{"merge 17", `[{"set": {"target": "a", "value": ` + nest(mergeWrap, `{}`, 17) + `}}]`, []string{"/0/set/value" + strings.Repeat("/$merge/0", 16) + "/$merge: $merge nested deeper than 16 levels"}},
		{"all errors at once", `[{"set": {}}, {"nope": 1}]`, []string{`/0/set: set requires "target"`, `/0/set: set requires "value"`, `/1/nope: unknown operation`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileHandler([]byte(tc.handler))
			if err == nil {
				t.Fatalf("got no error, want %q", tc.want)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %T %v, want Errors", err, err)
			}
			if len(es) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d: %q", len(es), err, len(tc.want), tc.want)
			}
			for i, e := range es {
				if got := e.Error(); !strings.Contains(got, tc.want[i]) {
					t.Errorf("error %d: got %q, want it to contain %q", i, got, tc.want[i])
				}
				if !errors.Is(e, ErrInvalid) && !errors.Is(e, ErrJSON) {
					t.Errorf("error %d: got %v, want it to wrap ErrInvalid or ErrJSON", i, e.Err)
				}
			}
		})
	}
}

func TestCompileHandlerLimitsAccepted(t *testing.T) {
	ifWrap := `[{"if": {"eq": [1, 1]}, "then": %s}]`
	for name, h := range map[string]string{
		"nesting 5":       nest(ifWrap, `[]`, 5),
		"ops 100":         ops(100),
		"merge 16":        `[{"set": {"target": "a", "value": ` + nest(`{"$merge": [%s]}`, `{}`, 16) + `}}]`,
		"empty":           `[]`,
		"conditional key": `[{"conditional": {"if": {"eq": [1, 1]}, "then": [], "else": []}}]`,
	} {
		h2, err := CompileHandler([]byte(h))
		if err != nil {
			t.Errorf("%s: got %v, want it to compile", name, err)
			continue
		}
		if _, err := h2.Apply(Value{}, &Event{}); err != nil {
			t.Errorf("%s: apply: got %v", name, err)
		}
	}
	if h, _ := CompileHandler([]byte(ops(100))); h.Operations() != 100 {
		t.Errorf("got %d operations, want 100", h.Operations())
	}
}

func TestCompileTemplate(t *testing.T) {
	concat := `{"concat": [%s]}`
	for _, tc := range []struct {
		name, tmpl string
		opts       TemplateOptions
		want       string // "" = compiles
	}{
		{"depth 32", nest(concat, `"x"`, 32), TemplateOptions{}, ""},
		{"depth 33", nest(concat, `"x"`, 33), TemplateOptions{}, "concat nested deeper than 32 levels"},
		{"mixed depth 33", nest(`{"merge": [{"a": {"coalesce": [%s]}}]}`, `"x"`, 17), TemplateOptions{}, "nested deeper than 32 levels"},
		{"item not allowed", `{"a": "$item.x"}`, TemplateOptions{}, "/a: unknown binding $item"},
		{"item allowed", `{"a": "$item.x"}`, TemplateOptions{Item: true}, ""},
		{"as binding", `{"a": "$entry.key"}`, TemplateOptions{Bindings: []string{"$entry"}}, ""},
		{"context not allowed", `{"a": "$context.step.x"}`, TemplateOptions{Prev: true}, "/a: $context is only available in saga steps"},
		{"error allowed", `{"a": "$error.message"}`, TemplateOptions{Error: true}, ""},
		{"wildcard rejected", `"$.a[*].id"`, TemplateOptions{}, "wildcard is allowed only in projection source id paths"},
		{"wildcard allowed", `"$.a[*].id"`, TemplateOptions{Wildcard: true}, ""},
		{"concat not array", `{"concat": "x"}`, TemplateOptions{}, "/concat: concat takes an array"},
		{"dollar not path", `{"$": 5}`, TemplateOptions{}, "/$: {\"$\": ...} takes a JSONPath string"},
	} {
		_, err := CompileTemplate([]byte(tc.tmpl), tc.opts)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got %v, want it to compile", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestCompilePredicateOptions(t *testing.T) {
	raw := []byte(`{"equals": ["$prev.type", "was_reserved"]}`)
	if _, err := CompilePredicate(raw); err != nil {
		t.Errorf("CompilePredicate: got %v, want any binding accepted", err)
	}
	if _, err := CompilePredicateWith(raw, TemplateOptions{}); err == nil {
		t.Errorf("CompilePredicateWith without Prev: got no error, want $prev rejected")
	}
	if _, err := CompilePredicateWith(raw, TemplateOptions{Prev: true}); err != nil {
		t.Errorf("CompilePredicateWith Prev: got %v", err)
	}
}

func TestParsePath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"", "empty path"},
		{"name", "must start with"},
		{"$.", `ends with "."`},
		{"$.a[x]", "invalid index [x]"},
		{"$.a?.b", "unexpected '?'"},
		{"$item-x", "unexpected '-' after $item"},
		{"@.a", ""},
		{"$.a[-1].b?", ""},
		{"$entry.value", ""},
	} {
		_, err := ParsePath(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: got %v, want it to parse", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: got %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

func TestReadsState(t *testing.T) {
	for _, tc := range []struct {
		template string
		want     bool
	}{
		{`"@"`, true},
		{`"@.reserved"`, true},
		{`"$.state.reserved?"`, true},
		{`"$.data.items"`, false},
		{`"$"`, false},
		{`"$item.sku"`, false},
		{`{"order": "$.key", "left": {"nested": ["x", "@.stock"]}}`, true},
		{`{"concat": ["$.data.a", "@.b"]}`, true},
		{`{"coalesce": ["$.data.a?", "$.data.b"]}`, false},
		{`{"merge": [{"$": "$.data"}, {"$": "@"}]}`, true},
		{`{"a": 1, "b": ["@ is text here"]}`, false},
	} {
		tmpl, err := CompileTemplate([]byte(tc.template), TemplateOptions{Item: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.template, err)
		}
		if got := tmpl.ReadsState(); got != tc.want {
			t.Errorf("template %s: ReadsState %v, want %v", tc.template, got, tc.want)
		}
	}
	for _, tc := range []struct {
		predicate string
		want      bool
	}{
		{`{"equals": ["$.data.status", "open"]}`, false},
		{`{"equals": ["@.status", "open"]}`, true},
		{`{"gt": ["$.data.n", "$.state.n"]}`, true},
		{`{"exists": "@.owner"}`, true},
		{`{"not": {"and": [{"exists": "$.data.a"}, {"lt": ["@.n", 3]}]}}`, true},
		{`{"or": [{"exists": "$.data.a"}, {"lt": ["$.data.n", 3]}]}`, false},
		{`{"some": {"in": "@.items", "match": {"equals": ["$item.id", "$.data.id"]}}}`, true},
		{`{"some": {"in": "$.data.items", "match": {"equals": ["$item.id", "@.id"]}}}`, true},
		{`{"some": {"in": "$.data.items", "match": {"equals": ["$item.id", "$.data.id"]}}}`, false},
	} {
		p, err := CompilePredicate([]byte(tc.predicate))
		if err != nil {
			t.Fatalf("%s: %v", tc.predicate, err)
		}
		if got := p.ReadsState(); got != tc.want {
			t.Errorf("predicate %s: ReadsState %v, want %v", tc.predicate, got, tc.want)
		}
	}
}
