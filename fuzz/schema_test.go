package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/schema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaSeeds pair schemas of the JSON Schema page with data that passes or fails them.
var schemaSeeds = [][2]string{
	{`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"email":{"type":"string","format":"email"}},"required":["name","email"],"additionalProperties":false}`, `{"name":"Alice","email":"not-an-email"}`},
	{`{"type":"object","properties":{"name":{"type":"string"}},"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, `{"name":"a","x-custom":"b","y":1}`},
	{`{"type":"object","propertyNames":{"pattern":"^[a-z_]+$","maxLength":30}}`, `{"ok_name":1,"Bad":2}`},
	{`{"type":"object","dependentRequired":{"credit_card":["billing_address","cvv"]}}`, `{"credit_card":"4111"}`},
	{`{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"},{"type":"boolean"}],"items":false}`, `["a",1,true,null]`},
	{`{"type":"array","contains":{"type":"integer","minimum":100},"minContains":2,"maxContains":5}`, `[100,200,3]`},
	{`{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":10,"uniqueItems":true}`, `["a","a"]`},
	{`{"type":"number","minimum":0,"maximum":1000,"exclusiveMaximum":1000,"multipleOf":0.01}`, `999.995`},
	{`{"oneOf":[{"properties":{"type":{"const":"email"}},"required":["email"]},{"properties":{"type":{"const":"sms"}},"required":["phone"]}]}`, `{"type":"sms"}`},
	{`{"properties":{"shipping_method":{"enum":["standard","express"]}},"if":{"properties":{"shipping_method":{"const":"express"}}},"then":{"required":["express_fee"]}}`, `{"shipping_method":"express"}`},
	{`{"$defs":{"money":{"type":"object","properties":{"amount":{"type":"integer","minimum":0},"currency":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["amount","currency"]}},"properties":{"total":{"$ref":"#/$defs/money"}}}`, `{"total":{"amount":1.0,"currency":"eur"}}`},
	{`{"properties":{"middle_name":{"type":["string","null"]}},"not":{"required":["x"]}}`, `{"middle_name":5}`},
	{`{"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"$ref":"#/$defs/node"}`, `{"next":{"next":{"next":1}}}`},
	{`{"unevaluatedProperties":false}`, `{}`},
	{`{"format":"hostname"}`, `"xn--ll-0ea"`},
	{`{"format":"regex"}`, `"(?<n>a)\\k<n>"`},
	// Schemas that ValidateJSON checks on the raw bytes, where it can, before decoding.
	{`{"type":"object"}`, `{"items":[{"sku":"a","qty":1}]}`},
	{`{"type":"object","properties":{"quantity":{"type":"integer"}},"required":["quantity"],"additionalProperties":{"type":"string"}}`, `{"order_id":"o","quantity":1.0}`},
	{`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":["number","null"]},"minItems":1,"maxItems":3}`, `["a",1e2,null]`},
	{`{"properties":{"s":{"enum":["a"]},"o":{"const":{"a":1}},"n":{"minimum":1}}}`, `{"s":"a","o":{"a":1},"n":"x"}`},
	{`{"items":false,"properties":{"a":false}}`, `{"a":[]}`},
}

// FuzzSchemaValidate checks that compiling and validating never panic, that a failure is always
// the documented error and is the same every time, and that Validate agrees with the compiler's
// own validator wherever the two share semantics (schemas without format).
func FuzzSchemaValidate(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, rawSchema, rawData []byte) {
		s, issues := schema.Compile(rawSchema)
		if s == nil {
			if len(issues) == 0 {
				t.Fatal("Compile returned neither a schema nor issues")
			}
			return
		}
		err := s.ValidateJSON(rawData)
		if errors.Is(err, schema.ErrInvalidJSON) {
			return
		}
		if err != nil {
			var verr *schema.ValidationError
			if !errors.As(err, &verr) || verr.Message != schema.FailureMessage || !strings.HasPrefix(verr.Path, "data") {
				t.Fatalf("got %#v, want the documented *ValidationError", err)
			}
			if again := s.ValidateJSON(rawData); again == nil || again.Error() != err.Error() {
				t.Fatalf("second validation: got %v, want %v", again, err)
			}
		}
		if bytes.Contains(rawSchema, []byte("format")) {
			return
		}
		lib, ok := schemaCompileReference(rawSchema)
		if !ok {
			return
		}
		var data any
		dec := json.NewDecoder(bytes.NewReader(rawData))
		dec.UseNumber()
		if dec.Decode(&data) != nil {
			return
		}
		if want := lib.Validate(data) == nil; (err == nil) != want {
			t.Fatalf("schema %s, data %s: got valid=%v (%v), the compiler's validator says valid=%v", rawSchema, rawData, err == nil, err, want)
		}
	})
}

// schemaCompileReference compiles with the plain compiler: Draft 2020-12, nothing loaded.
func schemaCompileReference(raw []byte) (*jsonschema.Schema, bool) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, false
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(schemaNoLoader{})
	if c.AddResource("urn:fuzz:schema", doc) != nil {
		return nil, false
	}
	s, err := c.Compile("urn:fuzz:schema")
	return s, err == nil
}

type schemaNoLoader struct{}

func (schemaNoLoader) Load(u string) (any, error) { return nil, fmt.Errorf("%s: not loaded", u) }

// FuzzSchemaDecode checks the data parser: it accepts exactly what encoding/json accepts, reads
// the same value from it (strings, numbers kept exact), and any JSON value equals itself under
// const and enum.
func FuzzSchemaDecode(f *testing.F) {
	for _, s := range schemaSeeds {
		f.Add([]byte(s[1]))
	}
	for _, s := range []string{`1e400`, `-0`, `0.10`, `"\ud800"`, `"\u00e9"`, `{"a":1,"a":2}`, `[1,]`, `{} x`, " \n[ ] \t", `9007199254740993`} {
		f.Add([]byte(s))
	}
	anySchema, _ := schema.Compile([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := anySchema.ValidateJSON(raw)
		if json.Valid(raw) != !errors.Is(err, schema.ErrInvalidJSON) {
			t.Fatalf("%q: json.Valid=%v but ValidateJSON says %v", raw, json.Valid(raw), err)
		}
		if err != nil || bytes.Count(raw, []byte("[")) > 50 || bytes.Count(raw, []byte("{")) > 50 {
			return
		}
		var std any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&std) != nil {
			t.Fatalf("%q: encoding/json cannot decode what json.Valid accepts", raw)
		}
		stdText, err := json.Marshal(std)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, raw) != nil {
			return
		}
		for _, doc := range []string{`{"const":` + compact.String() + `}`, `{"enum":[` + compact.String() + `]}`, `{"const":` + string(stdText) + `}`} {
			s, issues := schema.Compile([]byte(doc))
			if s == nil {
				t.Fatalf("%s: %v", doc, issues)
			}
			if err := s.ValidateJSON(raw); err != nil {
				t.Fatalf("%s does not equal itself under %s: %v", raw, doc, err)
			}
		}
	})
}
