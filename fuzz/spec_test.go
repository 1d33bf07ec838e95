package fuzz

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/spec"
)

// specSeeds returns the spec sections of engine/spec's testdata: every documentation example
// and every rule's failing case.
func specSeeds(f *testing.F) [][]byte {
	files, err := filepath.Glob("../engine/spec/testdata/load/*.txt")
	if err != nil || len(files) == 0 {
		f.Fatalf("no spec seeds: %v", err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		text := string(b)
		for strings.HasPrefix(text, "#") {
			_, text, _ = strings.Cut(text, "\n")
		}
		doc, _, _ := strings.Cut(text, "\n----\n")
		out = append(out, []byte(doc))
	}
	return out
}

// FuzzSpecLoad checks that Load never panics and that its answer is consistent: a Spec exactly
// when there are no errors, positions inside the text, the same report twice, a loaded spec
// that loads again from its Document (bare and wrapped) with the same aggregate types, and that
// any loaded spec is backward compatible with itself.
func FuzzSpecLoad(f *testing.F) {
	for _, s := range specSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, rep := spec.Load(raw)
		if rep.OK() != (s != nil) {
			t.Fatalf("OK()=%v but spec nil=%v", rep.OK(), s == nil)
		}
		lines := bytes.Count(raw, []byte("\n")) + 1
		for _, is := range append(append([]spec.Issue(nil), rep.Errors...), rep.Warnings...) {
			if is.Line < 1 || is.Line > lines || is.Column < 1 || is.Message == "" {
				t.Fatalf("issue %+v is outside a text of %d lines or has no message", is, lines)
			}
			if is.Pointer != "" && !strings.HasPrefix(is.Pointer, "/") {
				t.Fatalf("pointer %q is not a JSON Pointer", is.Pointer)
			}
		}
		_, again := spec.Load(raw)
		if !reflect.DeepEqual(rep, again) {
			t.Fatalf("two loads of the same text disagree:\n%+v\n%+v", rep, again)
		}
		if s == nil {
			return
		}
		doc := s.Document()
		if !json.Valid(doc) {
			t.Fatalf("Document() is not JSON: %q", doc)
		}
		for _, text := range [][]byte{doc, append(append([]byte(`{"spec":`), doc...), '}')} {
			s2, rep2 := spec.Load(text)
			if !rep2.OK() {
				t.Fatalf("Document() does not load again: %v", rep2.Errors)
			}
			if !reflect.DeepEqual(s.AggregateTypes(), s2.AggregateTypes()) {
				t.Fatalf("aggregate types %v, reloaded %v", s.AggregateTypes(), s2.AggregateTypes())
			}
		}
		if issues := spec.CheckCompat(s, s, false, true); len(issues) > 0 {
			t.Fatalf("a spec is incompatible with itself: %v", issues)
		}
	})
}
