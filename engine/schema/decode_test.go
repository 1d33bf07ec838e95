package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeMatchesEncodingJSON checks the data parser against encoding/json with UseNumber on
// the inputs where parsers usually differ.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `  7  `, `-0`, `0.10`, `1e400`, `-1.5E-3`, `1E+2`,
		`{"a":1,"a":2}`, `""`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`,
		`"\ud800\u0041"`, `"\udc00\ud800"`, "\"\xff\xfe\"", "\"é😀\"", "\"\xed\xa0\x80\"", `[]`, `{}`, "[\n]",
		`[1,]`, `{"a":1,}`, `{"a" 1}`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `tru`, `nul`, `"\x"`, `"\u12"`,
		"\"a\x01\"", `{"a":1} {"b":2}`, `[1] x`, ``, ` `, `{`, `[`, `"`, `{"a"`, `{"a":`, `NaN`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	}
	for _, in := range inputs {
		got, gotErr := decodeJSON([]byte(in))
		var want any
		dec := json.NewDecoder(bytes.NewReader([]byte(in)))
		dec.UseNumber()
		wantErr := dec.Decode(&want)
		if wantErr == nil && !json.Valid([]byte(in)) {
			wantErr, want = errTrailingData, nil
		}
		name := in
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%q: got error %v, encoding/json says %v", name, gotErr, wantErr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, want %#v", name, got, want)
		}
	}
}

// TestDecodeKnownKeys checks that reusing known key strings never changes what is parsed.
func TestDecodeKnownKeys(t *testing.T) {
	keys := map[string]string{"name": "name", "a\nb": "a\nb", "é": "é", `q"`: `q"`, "": ""}
	for _, in := range []string{
		`{"name":1}`, `{"n\u0061me":1}`, "{\"a\nb\":1}", `{"a\nb":1}`, `{"é":1}`, `{"\u00e9":1}`,
		`{"q\"":1}`, `{"":1}`, `{"name":{"name":[{"name":"name"}]}}`, `{"name"`, `{"name":}`, `{"nam`,
	} {
		got, gotErr := decodeJSONKeys([]byte(in), keys)
		want, wantErr := decodeJSON([]byte(in))
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, %v, want %#v, %v", in, got, gotErr, want, wantErr)
		}
	}
}
