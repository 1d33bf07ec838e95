package ident

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// caseFile is one file of testdata/: the singletons a spec declares and the cases run with them.
type caseFile struct {
	Singletons []string   `json:"singletons"`
	Cases      []caseSpec `json:"cases"`
}

// caseSpec is one id through the rule. A case expects either Kind and Want, or Expected, Errs
// and Path; Message, when given, is the whole error message.
type caseSpec struct {
	Name       string    `json:"name"`
	Doc        string    `json:"doc"`        // where the example comes from
	Field      string    `json:"field"`      // key (default), actor or target
	ActorType  string    `json:"actor_type"` // for field actor; empty means an ordinary agent type
	Singletons *[]string `json:"singletons"` // overrides the file's list when present
	ID         string    `json:"id"`

	Kind string `json:"kind"`
	Want string `json:"want"`

	Expected string   `json:"expected"`
	Errs     []string `json:"errs"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
}

var testKinds = map[string]Kind{
	"none":         KindNone,
	"uuid":         KindUUID,
	"humane":       KindHumane,
	"global":       KindGlobal,
	"singleton":    KindSingleton,
	"tagged":       KindTagged,
	"system_agent": KindSystemAgent,
}

var testSentinels = map[string]error{
	"ErrEmpty":        ErrEmpty,
	"ErrUnrecognized": ErrUnrecognized,
	"ErrUUIDFormat":   ErrUUIDFormat,
	"ErrUUIDVersion":  ErrUUIDVersion,
	"ErrUUIDVariant":  ErrUUIDVariant,
	"ErrTaggedUUID":   ErrTaggedUUID,
	"ErrTag":          ErrTag,
	"ErrHumane":       ErrHumane,
	"ErrSystemAgent":  ErrSystemAgent,
}

var testFields = map[string]Field{"": Key, "key": Key, "actor": ActorID, "target": TargetID}

func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files under testdata: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cf caseFile
		if err := json.Unmarshal(raw, &cf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i, c := range cf.Cases {
			name := strings.TrimSuffix(filepath.Base(file), ".json") + "/" + c.Name
			t.Run(name, func(t *testing.T) {
				singletons := cf.Singletons
				if c.Singletons != nil {
					singletons = *c.Singletons
				}
				runCase(t, file, i, NewRules(singletons), c)
			})
		}
	}
}

func runCase(t *testing.T, file string, i int, r Rules, c caseSpec) {
	field, ok := testFields[c.Field]
	if !ok {
		t.Fatalf("%s case %d: unknown field %q", file, i, c.Field)
	}
	var (
		got  string
		kind Kind
		err  error
	)
	if field == ActorID {
		got, kind, err = r.NormalizeActor(c.ActorType, c.ID)
	} else {
		got, kind, err = r.Normalize(field, c.ID)
	}

	if c.Errs == nil {
		wantKind, ok := testKinds[c.Kind]
		if !ok || c.Kind == "none" {
			t.Fatalf("%s case %d: a success case needs a kind, got %q", file, i, c.Kind)
		}
		if err != nil {
			t.Fatalf("%q: got error %v, want %q (%s) [%s]", c.ID, err, c.Want, c.Kind, c.Doc)
		}
		if got != c.Want || kind != wantKind {
			t.Fatalf("%q: got %q (%s), want %q (%s) [%s]", c.ID, got, kind, c.Want, wantKind, c.Doc)
		}
		return
	}

	if err == nil {
		t.Fatalf("%q: got %q (%s), want an error %v [%s]", c.ID, got, kind, c.Errs, c.Doc)
	}
	if got != "" || kind != KindNone {
		t.Errorf("%q: failure returned %q (%s), want empty", c.ID, got, kind)
	}
	for _, name := range c.Errs {
		s, ok := testSentinels[name]
		if !ok {
			t.Fatalf("%s case %d: unknown sentinel %q", file, i, name)
		}
		if !errors.Is(err, s) {
			t.Errorf("%q: got error %q, want it to wrap %s [%s]", c.ID, err, name, c.Doc)
		}
	}
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("%q: got error %T, want *Error", c.ID, err)
	}
	if c.Path == "" {
		t.Fatalf("%s case %d: an error case needs its path", file, i)
	}
	if ie.Path() != c.Path {
		t.Errorf("%q: got path %q, want %q", c.ID, ie.Path(), c.Path)
	}
	if want := testKinds[c.Expected]; c.Expected == "" || ie.Expected != want {
		t.Errorf("%q: got expected kind %s, want %q", c.ID, ie.Expected, c.Expected)
	}
	if ie.ID != c.ID {
		t.Errorf("%q: error carries id %q", c.ID, ie.ID)
	}
	if c.Message != "" && err.Error() != c.Message {
		t.Errorf("%q: got message\n\t%s\nwant\n\t%s", c.ID, err.Error(), c.Message)
	}
}

// TestNormalizedIsFixedPoint checks idempotence on every accepted case of the data files: the
// canonical form normalizes to itself with the same kind.
func TestNormalizedIsFixedPoint(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cf caseFile
		if err := json.Unmarshal(raw, &cf); err != nil {
			t.Fatal(err)
		}
		for _, c := range cf.Cases {
			if c.Errs != nil || c.Field == "actor" && IsSystemActorType(c.ActorType) {
				continue
			}
			singletons := cf.Singletons
			if c.Singletons != nil {
				singletons = *c.Singletons
			}
			r := NewRules(singletons)
			once, k1, err := r.Normalize(Key, c.ID)
			if err != nil {
				t.Fatalf("%s %q: %v", c.Name, c.ID, err)
			}
			twice, k2, err := r.Normalize(Key, once)
			if err != nil || twice != once || k2 != k1 {
				t.Errorf("%s: %q normalizes to %q (%s), which normalizes to %q (%s, %v)", c.Name, c.ID, once, k1, twice, k2, err)
			}
		}
	}
}

func TestCanonicalInputIsNotCopied(t *testing.T) {
	r := NewRules([]string{"all"})
	for _, id := range []string{"a0000000-0000-4000-a000-000000000001", "ABC123XYZ", "a0000000-0000-4000-a000-000000000001:2026"} {
		if n := testing.AllocsPerRun(100, func() { _, _, _ = r.Normalize(Key, id) }); n != 0 {
			t.Errorf("%q: got %v allocations, want 0 for an id already canonical", id, n)
		}
	}
}

func TestLongIDIsTruncatedInMessage(t *testing.T) {
	id := strings.Repeat("x", 10_000)
	_, _, err := Rules{}.Normalize(TargetID, id)
	if err == nil {
		t.Fatal("got no error for a 10,000-byte id")
	}
	msg := err.Error()
	if !strings.Contains(msg, strings.Repeat("x", maxQuoted)+`"...`) || strings.Contains(msg, strings.Repeat("x", maxQuoted+1)) {
		t.Errorf("got a %d-byte message, want the id cut to %d bytes: %.120s", len(msg), maxQuoted, msg)
	}
}

func TestSingletonKindsAlwaysExist(t *testing.T) {
	for k, want := range map[Kind]bool{
		KindGlobal: true, KindSingleton: true,
		KindUUID: false, KindHumane: false, KindTagged: false, KindSystemAgent: false, KindNone: false,
	} {
		if got := k.IsSingleton(); got != want {
			t.Errorf("%s.IsSingleton(): got %v, want %v", k, got, want)
		}
	}
}

func TestHumaneAlphabet(t *testing.T) {
	if len(humaneAlphabet) != 32 {
		t.Fatalf("got %d canonical characters, want 32", len(humaneAlphabet))
	}
	for _, c := range "ILOU" {
		if strings.ContainsRune(humaneAlphabet, c) {
			t.Errorf("canonical alphabet holds %c, which identifiers.md excludes", c)
		}
	}
	// Every ASCII letter and digit folds to a canonical character; nothing else folds at all.
	for b := 0; b < 256; b++ {
		alnum := '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
		f := humaneFold[b]
		if alnum != (f != 0) || f != 0 && !strings.ContainsRune(humaneAlphabet, rune(f)) {
			t.Errorf("byte %q folds to %q", rune(b), rune(f))
		}
	}
}
