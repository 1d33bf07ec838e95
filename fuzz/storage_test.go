package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
)

// FuzzStorageCanonical: canonical JSON is valid JSON, idempotent, and accepted exactly when the
// input is valid JSON without duplicate keys or lone surrogates; IsCanonical accepts only texts
// that canonicalize to themselves, and every such text without a backslash.
func FuzzStorageCanonical(f *testing.F) {
	for _, s := range []string{
		`{"data":{"status":"shipped"},"metadata":{"actor":{"type":"user","id":"user-456"},"previous_length":5}}`,
		`{"b":1,"a":[1.0,2E+3,-0,"\u00e9\ud83d\ude00"]}`,
		`{"a":1,"a":2}`, `"\ud800"`, `[`, ` null `, `1e-7`, `{"\u0000":"\t"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// Any bytes as a string: AppendString writes what canonicalizing its JSON gives.
		quoted, _ := json.Marshal(string(in))
		if want, err := canonical.Canonicalize(quoted); err != nil || !bytes.Equal(canonical.AppendString(nil, string(in)), want) {
			t.Fatalf("AppendString(%q) = %s, want %s (%v)", in, canonical.AppendString(nil, string(in)), want, err)
		}
		out, err := canonical.Canonicalize(in)
		if canonical.IsCanonical(in) && (err != nil || !bytes.Equal(out, in)) {
			t.Fatalf("IsCanonical accepts %q, which canonicalizes to %q (%v)", in, out, err)
		}
		if err != nil {
			if errors.Is(err, canonical.ErrSyntax) && json.Valid(in) && bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) < canonical.MaxDepth {
				t.Fatalf("valid JSON %q rejected as invalid: %v", in, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form %q of %q is not JSON", out, in)
		}
		if !canonical.IsCanonical(out) && !bytes.Contains(out, []byte(`\`)) {
			t.Fatalf("IsCanonical refuses the canonical text %q", out)
		}
		again, err := canonical.Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
	})
}

// FuzzStorageStreamID: a parsed stream id prints back to a string that parses to the same id.
func FuzzStorageStreamID(f *testing.F) {
	for _, s := range []string{"1705312800123-0", "1706789012345-2", "0-0", "42", "-1", "1-", "18446744073709551615-18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := storage.ParseStreamID(s)
		if err != nil {
			return
		}
		back, err := storage.ParseStreamID(id.String())
		if err != nil || back != id {
			t.Fatalf("%q -> %v -> %q -> %v (%v)", s, id, id.String(), back, err)
		}
	})
}

// FuzzStorageImport: no import line, however malformed, panics the store or leaves a stream
// whose chain does not verify.
func FuzzStorageImport(f *testing.F) {
	f.Add([]byte(`{"aggregate_id":"o1","aggregate_type":"order","data":{"a":1},"hash":"00","index":1,"key":"order:o1","metadata":null,"stream_id":"1-0","timestamp":1,"type":"was_placed"}`))
	f.Add([]byte("{}\n{\"index\":1}\n"))
	f.Add([]byte("not json"))
	s, err := storage.Open(f.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := s.Import(bytes.NewReader(in)); err == nil {
			return
		}
		k := storage.StreamKey{Type: "order", ID: "o1"}
		if bad, err := s.VerifyStream(k); err != nil || bad != 0 {
			t.Fatalf("after import of %q: first bad %d, %v", in, bad, err)
		}
	})
}
