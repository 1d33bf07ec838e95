package schema

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
)

type errorCase struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Data   json.RawMessage `json:"data"`
	Want   json.RawMessage `json:"want"`
}

// errorBody is the documented error body of a schema failure, with detail when a case names it.
type errorBody struct {
	Path       string `json:"path"`
	Field      string `json:"field"`
	Constraint string `json:"constraint"`
	Expected   any    `json:"expected"`
	Received   any    `json:"received"`
	Message    string `json:"message"`
	Detail     string `json:"detail,omitempty"`
}

// TestDocumentedErrors checks one case per error example of the documentation.
func TestDocumentedErrors(t *testing.T) {
	var cases []errorCase
	readCases(t, "testdata/errors.json", &cases)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s, issues := Compile(tc.Schema)
			if issues != nil {
				t.Fatalf("compile: %v", issues)
			}
			err := s.ValidateJSON(tc.Data)
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("got %v, want a *ValidationError", err)
			}
			if !errors.Is(err, ErrValidationFailed) {
				t.Errorf("errors.Is(err, ErrValidationFailed) = false, want true")
			}
			want := normalize(t, tc.Want)
			body := errorBody{verr.Path, verr.Field, verr.Constraint, verr.Expected, verr.Received, verr.Message, ""}
			if _, ok := want.(map[string]any)["detail"]; ok {
				body.Detail = verr.Detail
			}
			raw, _ := json.Marshal(body)
			if got := normalize(t, raw); !reflect.DeepEqual(got, want) {
				t.Errorf("got %s, want %s", raw, tc.Want)
			}
		})
	}
}

func TestValidDataPasses(t *testing.T) {
	s, issues := Compile([]byte(`{"type":"object","properties":{"email":{"type":"string","format":"email"},"n":{"type":"integer","maximum":9007199254740992}},"required":["email"]}`))
	if issues != nil {
		t.Fatalf("compile: %v", issues)
	}
	for _, data := range []string{`{"email":"alice@example.com"}`, `{"email":"a@b.co","n":9007199254740992}`, `{"email":"a@b.co","extra":[1,{"x":null}]}`} {
		if err := s.ValidateJSON([]byte(data)); err != nil {
			t.Errorf("%s: got %v, want nil", data, err)
		}
	}
	// Numbers are compared exactly: 2^53+1 equals 2^53 as a float64 but is above the maximum.
	if err := s.ValidateJSON([]byte(`{"email":"a@b.co","n":9007199254740993}`)); err == nil {
		t.Errorf("n = 2^53+1: got nil, want a maximum failure")
	}
}

// TestAcceptsEveryObject: only schemas that leave an object's members free answer true. (The
// compliance test checks, over the whole suite, that no object such a schema refuses exists.)
func TestAcceptsEveryObject(t *testing.T) {
	every := []string{
		`{"type":"object"}`, `{}`, `true`, `{"type":["object","null"]}`,
		`{"type":"object","description":"free"}`, `{"type":"object","items":{"type":"string"}}`,
	}
	notEvery := []string{
		`false`, `{"type":"array"}`, `{"type":"object","required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","additionalProperties":false}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","minProperties":1}`, `{"type":"object","maxProperties":3}`,
		`{"type":"object","propertyNames":{"maxLength":2}}`,
		`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`,
		`{"type":"object","not":{"type":"object","required":["a"]}}`,
		`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`,
		`{"type":"object","enum":[{}]}`, `{"type":"object","const":{}}`,
		`{"type":"object","dependentRequired":{"a":["b"]}}`,
		`{"$defs":{"o":{"type":"object","required":["a"]}},"$ref":"#/$defs/o"}`,
	}
	for i, schema := range append(every, notEvery...) {
		s, issues := Compile([]byte(schema))
		if issues != nil {
			t.Fatalf("%s: compile: %v", schema, issues)
		}
		if got, want := s.AcceptsEveryObject(), i < len(every); got != want {
			t.Errorf("%s: AcceptsEveryObject() = %v, want %v", schema, got, want)
		}
	}
}

func TestValidateJSONRejectsMalformedData(t *testing.T) {
	s, _ := Compile([]byte(`{}`))
	for _, data := range []string{``, `{`, `{"a":1} {"b":2}`, `nul`} {
		if err := s.ValidateJSON([]byte(data)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%q: got %v, want ErrInvalidJSON", data, err)
		}
	}
}

func readCases(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func normalize(t *testing.T, raw []byte) any {
	t.Helper()
	v, err := decodeJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// TestFailureChoiceIsDeterministic checks that among several failures the one reported is
// always the same: the first in data order, then by keyword.
func TestFailureChoiceIsDeterministic(t *testing.T) {
	s, issues := Compile([]byte(`{"type":"object","properties":{
		"e":{"type":"string"},"d":{"type":"integer"},"c":{"format":"email"},"b":{"enum":[1]},
		"a":{"type":"object","properties":{"z":{"type":"string"},"y":{"minimum":3}}}},"required":["q"]}`))
	if issues != nil {
		t.Fatal(issues)
	}
	data := []byte(`{"e":1,"d":"x","c":"nope","b":2,"a":{"z":1,"y":1}}`)
	for i := 0; i < 50; i++ {
		var verr *ValidationError
		if err := s.ValidateJSON(data); !errors.As(err, &verr) {
			t.Fatalf("got %v, want a *ValidationError", err)
		}
		if verr.Path != "data" || verr.Constraint != "required" || verr.Field != "q" {
			t.Fatalf("run %d: got %s %s %s, want data required q", i, verr.Path, verr.Constraint, verr.Field)
		}
	}
	// Failures at one place come out of the validator in map order; the choice must not.
	s, _ = Compile([]byte(`{"propertyNames":{"pattern":"^[a-z]+$"},"dependentRequired":{"a":["x"],"b":["y"]}}`))
	for i := 0; i < 50; i++ {
		var verr *ValidationError
		if err := s.ValidateJSON([]byte(`{"1000":1,"B":2,"a":1,"b":2}`)); !errors.As(err, &verr) || verr.Constraint != "dependentRequired" || verr.Field != "x" {
			t.Fatalf("run %d: got %v, want dependentRequired x", i, err)
		}
		if err := s.ValidateJSON([]byte(`{"1000":1,"B":2}`)); !errors.As(err, &verr) || verr.Field != `["1000"]` {
			t.Fatalf("run %d: got %v, want propertyNames 1000", i, err)
		}
	}
	s, _ = Compile([]byte(`{"properties":{"e":{"type":"string"},"a":{"properties":{"z":{"type":"string"},"y":{"minimum":3}}}}}`))
	for i := 0; i < 50; i++ {
		var verr *ValidationError
		if err := s.ValidateJSON([]byte(`{"e":1,"a":{"z":1,"y":1}}`)); !errors.As(err, &verr) || verr.Path != "data.a.y" {
			t.Fatalf("run %d: got %v, want the failure at data.a.y", i, err)
		}
	}
}

// TestConcurrentValidation validates with one schema from many goroutines; run with -race.
func TestConcurrentValidation(t *testing.T) {
	s, issues := Compile([]byte(benchSchema))
	if issues != nil {
		t.Fatal(issues)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := s.ValidateJSON([]byte(benchEvent)); err != nil {
					t.Errorf("valid event: got %v", err)
					return
				}
				if err := s.ValidateJSON([]byte(`{"email":"x"}`)); err == nil {
					t.Errorf("invalid event: got nil")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestPathNotation(t *testing.T) {
	s, _ := Compile([]byte(`{"properties":{"line items":{"items":{"properties":{"sku":{"type":"string"}}}}}}`))
	var verr *ValidationError
	if err := s.ValidateJSON([]byte(`{"line items":[{"sku":"a"},{"sku":5}]}`)); !errors.As(err, &verr) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	if want := `data["line items"][1].sku`; verr.Path != want || verr.Field != `["line items"][1].sku` {
		t.Errorf("got path %s field %s, want %s", verr.Path, verr.Field, want)
	}
}
