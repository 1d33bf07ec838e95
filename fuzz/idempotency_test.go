package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/idempotency"
	"github.com/j17-go/j17/storage/canonical"
)

// FuzzIdempotencyFingerprint checks the request fingerprint of the idempotency rules on two
// bodies. Properties: it never panics and is deterministic; a body rewritten with its object
// members in reverse order, other whitespace and other string escapes keeps its fingerprint; and
// two JSON bodies get the same fingerprint exactly when they hold the same value.
func FuzzIdempotencyFingerprint(f *testing.F) {
	seeds := [][2]string{
		{`{"data":{"name":"Di"},"metadata":{"actor":{"type":"user","id":"x"}}}`, `{ "metadata" : {"actor":{"id":"x","type":"user"}}, "data":{"name":"Di"} }`},
		{`{"a":1,"b":[1,2,{"c":null}]}`, `{"b":[1,2,{"c":null}],"a":1}`},
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1E+3}`, `{"a":1e3}`},
		{`{"s":"\u00e9\/"}`, `{"s":"é/"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":"1"}`, `{"a":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"a":"\ud800"}`, `{}`},
		{`[]`, `{}`},
		{`not json`, `not json `},
		{`12345678901234567890`, `12345678901234567891`},
		{"{\"k\":\"\xff\"}", `{"k":"x"}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ha := idempotency.Fingerprint(a)
		if idempotency.Fingerprint(bytes.Clone(a)) != ha {
			t.Fatalf("fingerprint of %q is not deterministic", a)
		}
		va, okA := idempotencyValue(a)
		if !okA {
			return
		}
		for style := 0; style < 2; style++ {
			re := idempotencyRewrite(nil, va, style)
			if idempotency.Fingerprint(re) != ha {
				t.Fatalf("%q rewritten as %q: fingerprint changed", a, re)
			}
		}
		vb, okB := idempotencyValue(b)
		if !okB {
			return
		}
		same := reflect.DeepEqual(va, vb)
		if hb := idempotency.Fingerprint(b); (ha == hb) != same {
			t.Fatalf("%q and %q: equal values %v, equal fingerprints %v", a, b, same, ha == hb)
		}
	})
}

// idempotencyValue decodes body as the canonical form sees it: numbers as their text with the
// exponent written "e" and without "+", so that 1 and 1.0 stay apart. It reports false for a
// body the canonical form refuses (not JSON, a duplicate key, invalid UTF-8, a lone surrogate),
// whose fingerprint is the hash of its bytes.
func idempotencyValue(body []byte) (any, bool) {
	if _, err := canonical.Canonicalize(body); err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return idempotencyNumbers(v), true
}

func idempotencyNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return json.Number(strings.ReplaceAll(strings.ReplaceAll(string(x), "E", "e"), "e+", "e"))
	case []any:
		for i := range x {
			x[i] = idempotencyNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = idempotencyNumbers(x[k])
		}
	}
	return v
}

// idempotencyRewrite writes v with its object members in reverse key order. Style 0 pads every
// token with whitespace; style 1 escapes every non-ASCII character as \u.
func idempotencyRewrite(dst []byte, v any, style int) []byte {
	pad := func(dst []byte) []byte {
		if style == 0 {
			return append(dst, " \n\t\r"...)
		}
		return dst
	}
	dst = pad(dst)
	switch x := v.(type) {
	case nil:
		dst = append(dst, "null"...)
	case bool:
		dst = fmt.Appendf(dst, "%t", x)
	case json.Number:
		dst = append(dst, x...)
	case string:
		dst = idempotencyString(dst, x, style == 1)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(pad(dst), ',')
			}
			dst = idempotencyRewrite(dst, e, style)
		}
		dst = append(pad(dst), ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(pad(dst), ',')
			}
			dst = idempotencyString(pad(dst), k, style == 1)
			dst = append(pad(dst), ':')
			dst = idempotencyRewrite(dst, x[k], style)
		}
		dst = append(pad(dst), '}')
	}
	return pad(dst)
}

func idempotencyString(dst []byte, s string, escapeAll bool) []byte {
	if !escapeAll {
		b, _ := json.Marshal(s)
		return append(dst, b...)
	}
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20 || r >= 0x7f:
			if r > 0xffff {
				r -= 0x10000
				dst = fmt.Appendf(dst, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				continue
			}
			dst = fmt.Appendf(dst, `\u%04X`, r)
		default:
			dst = append(dst, byte(r))
		}
	}
	return append(dst, '"')
}
