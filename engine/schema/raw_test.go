package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestRawPathAgrees checks the raw path against decoding then validating, on the inputs where
// reading bytes differs from reading values: escaped and non-ASCII names, duplicates, integral
// numbers written as decimals, malformed JSON and deep nesting.
func TestRawPathAgrees(t *testing.T) {
	const order = `{"type":"object","properties":{"quantity":{"type":"integer"},"sku":{"type":"string"},"lines":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"},"maxItems":3}},"required":["sku"],"additionalProperties":{"type":["string","boolean","null"]}}`
	deep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	cases := []struct {
		name, schema, data string
		// raw is what the raw path answers; it may say false for valid data it cannot be sure of.
		raw bool
	}{
		{"object only", `{"type":"object"}`, `{"items":[{"sku":"a","qty":1}],"x":{"y":[1,2,{"z":null}]}}`, true},
		{"object only, array data", `{"type":"object"}`, `[1]`, false},
		{"object only, malformed member", `{"type":"object"}`, `{"a":[1,}`, false},
		{"object only, bad escape", `{"type":"object"}`, `{"a":"\x"}`, false},
		{"object only, control character", `{"type":"object"}`, "{\"a\":\"\x01\"}", false},
		{"object only, invalid UTF-8", `{"type":"object"}`, "{\"a\":\"\xff\"}", true},
		{"object only, trailing data", `{"type":"object"}`, `{} {}`, false},
		{"object only, too deep", `{"type":"object"}`, `{"a":` + deep + `}`, false},
		{"object only, leading zero", `{"type":"object"}`, `{"a":01}`, false},
		{"empty schema, scalar", `{}`, ` 12.5e3 `, true},
		{"valid order", order, `{"sku":"a","quantity":2,"lines":["x",1,2.5],"note":"n"}`, true},
		{"integer written as decimal", order, `{"sku":"a","quantity":2.0}`, true},
		{"integer written with exponent", order, `{"sku":"a","quantity":1e2}`, true},
		{"fraction for integer", order, `{"sku":"a","quantity":2.5}`, false},
		{"missing required", order, `{"quantity":2}`, false},
		{"escaped required name", order, `{"\u0073ku":"a"}`, true},
		{"escaped property name", order, `{"sku":"a","qu\u0061ntity":"two"}`, false},
		{"non-ASCII additional name", order, `{"sku":"a","é":true}`, true},
		{"additional of a wrong type", order, `{"sku":"a","note":1}`, false},
		{"prefix item of a wrong type", order, `{"sku":"a","lines":[1]}`, false},
		{"too many items", order, `{"sku":"a","lines":["x",1,2,3]}`, false},
		{"earlier duplicate invalid", order, `{"sku":"a","quantity":"x","quantity":1}`, false},
		{"later duplicate invalid", order, `{"sku":"a","quantity":1,"quantity":"x"}`, false},
		{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2}`, false},
		{"false items", `{"items":false}`, `[]`, true},
		{"false items, one item", `{"items":false}`, `[1]`, false},
		{"enum under a raw object", `{"type":"object","properties":{"s":{"enum":["a","b"]}}}`, `{"s":"b"}`, true},
		{"enum under a raw object, no match", `{"type":"object","properties":{"s":{"enum":["a","b"]}}}`, `{"s":"c"}`, false},
		{"const object decoded", `{"properties":{"o":{"const":{"a":[1]}}}}`, `{"o":{"a":[1.0]}}`, true},
		{"string bounds", `{"properties":{"s":{"minLength":2,"pattern":"^é"}}}`, `{"s":"éa"}`, true},
		{"string bounds, too short", `{"properties":{"s":{"minLength":2}}}`, `{"s":"\u00e9"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, issues := Compile([]byte(c.schema))
			if issues != nil {
				t.Fatalf("compile: %v", issues)
			}
			if got := s.validRaw([]byte(c.data)); got != c.raw {
				t.Errorf("raw path: got valid=%v, want %v", got, c.raw)
			}
			want := false
			if v, err := decodeJSON([]byte(c.data)); err == nil {
				want = s.Validate(v) == nil
			}
			err := s.ValidateJSON([]byte(c.data))
			if (err == nil) != want {
				t.Errorf("ValidateJSON: got %v, want valid=%v", err, want)
			}
			if c.raw && !want {
				t.Errorf("raw path accepts data that decoding refuses")
			}
		})
	}
}

// TestRawPathKeepsErrors checks that data the raw path refuses gets the decoding path's answer.
func TestRawPathKeepsErrors(t *testing.T) {
	s, issues := Compile([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	if issues != nil {
		t.Fatal(issues)
	}
	if err := s.ValidateJSON([]byte(`{"n":`)); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("truncated data: got %v, want ErrInvalidJSON", err)
	}
	var verr *ValidationError
	if err := s.ValidateJSON([]byte(`{"n":1.5}`)); !errors.As(err, &verr) || verr.Path != "data.n" {
		t.Errorf("fraction: got %v, want a *ValidationError at data.n", err)
	}
}
