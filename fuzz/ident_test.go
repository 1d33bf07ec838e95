package fuzz

import (
	"errors"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/ident"
)

// identSingletons are the singleton names the documentation's specs declare.
var identSingletons = []string{"all", "daily_summary", "twilio_webhook", "stripe_webhook", "config", "rate_limits", "feature_flags"}

// identSeeds are the documentation's identifier examples and the edges of each rule.
var identSeeds = []string{
	"a0000000-0000-4000-a000-000000000001",
	"A0000000-0000-4000-A000-000000000001",
	"550e8400-e29b-41d4-a716-446655440000",
	"a4339497-daa0-5c39-a0d3-8e894750d2b0",
	"00000000-0000-5000-8000-000000000000",
	"a0000000-0000-1000-a000-000000000001",
	"a0000000-0000-4000-c000-000000000001",
	"{a0000000-0000-4000-a000-000000000001}",
	"a0000000000040000a000000000000001",
	"a0000000-0000-4000-a000-000000000001:2026",
	"A0000000-0000-4000-A000-000000000001:v2",
	"a4339497-daa0-5c39-a0d3-8e894750d2b0:202603",
	"a0000000-0000-4000-a000-000000000001:V2",
	"a0000000-0000-4000-a000-000000000001:abcdefgh123",
	"urn:uuid:a0000000-0000-4000-a000-000000000001",
	"global:2026",
	"ABC123XYZ",
	"abc123xyz",
	"iloUabcde",
	"ABC-123-XYZ",
	"ABC123XÉ",
	"global",
	"GLOBAL",
	"all",
	"twilio_webhook",
	"event_scheduler",
	"ord_123",
	"user-456",
	"",
}

// FuzzIdentNormalize checks that the identifier rule never panics, that every failure is an
// *ident.Error for the field asked about, and that normalization is idempotent, keeps the id's
// length, and folds the spellings identifiers.md says are one id to the same id.
func FuzzIdentNormalize(f *testing.F) {
	for _, s := range identSeeds {
		f.Add(s)
	}
	r := ident.NewRules(identSingletons)
	f.Fuzz(func(t *testing.T, id string) {
		for _, field := range []ident.Field{ident.Key, ident.ActorID, ident.TargetID} {
			n, k, err := r.Normalize(field, id)
			if err != nil {
				identCheckError(t, err, field, id)
				if n != "" || k != ident.KindNone {
					t.Fatalf("%q: failure returned %q (%s)", id, n, k)
				}
				continue
			}
			if len(n) != len(id) {
				t.Fatalf("%q: normalized to %q of another length", id, n)
			}
			n2, k2, err := r.Normalize(field, n)
			if err != nil || n2 != n || k2 != k {
				t.Fatalf("%q normalizes to %q (%s), which normalizes to %q (%s, %v)", id, n, k, n2, k2, err)
			}
			for _, other := range identSpellings(k, id) {
				if o, ko, err := r.Normalize(field, other); err != nil || o != n || ko != k {
					t.Fatalf("%q gives %q (%s) but its spelling %q gives %q (%s, %v)", id, n, k, other, o, ko, err)
				}
			}
		}
	})
}

// FuzzIdentActor checks the actor rule: a system_ type accepts exactly the allowlist, any other
// type the general rule.
func FuzzIdentActor(f *testing.F) {
	for _, typ := range []string{"user", "webhook", "system", "system_agent", "system_saga"} {
		for _, id := range identSeeds {
			f.Add(typ, id)
		}
	}
	r := ident.NewRules(identSingletons)
	f.Fuzz(func(t *testing.T, actorType, id string) {
		n, k, err := r.NormalizeActor(actorType, id)
		if !ident.IsSystemActorType(actorType) {
			wn, wk, werr := r.Normalize(ident.ActorID, id)
			if n != wn || k != wk || (err == nil) != (werr == nil) {
				t.Fatalf("actor %q/%q: got %q (%s, %v), want the general rule's %q (%s, %v)", actorType, id, n, k, err, wn, wk, werr)
			}
		}
		if err != nil {
			identCheckError(t, err, ident.ActorID, id)
			return
		}
		if !ident.IsSystemActorType(actorType) {
			return
		}
		switch id {
		case ident.EventScheduler, ident.TestDataImporter, ident.SagaCoordinator, ident.SagaCompensator:
		default:
			t.Fatalf("system actor %q/%q: accepted an id outside the allowlist", actorType, id)
		}
		if n != id || k != ident.KindSystemAgent {
			t.Fatalf("system actor %q/%q: got %q (%s), want the id unchanged as a system agent id", actorType, id, n, k)
		}
	})
}

func identCheckError(t *testing.T, err error, field ident.Field, id string) {
	t.Helper()
	var ie *ident.Error
	if !errors.As(err, &ie) {
		t.Fatalf("%q: got error %T %v, want *ident.Error", id, err, err)
	}
	if ie.Path() != field.Path() || ie.ID != id || ie.Unwrap() == nil {
		t.Fatalf("%q: got error for %s with id %q, want %s", id, ie.Path(), ie.ID, field.Path())
	}
}

// identSpellings returns other spellings of an accepted id that identifiers.md says name the same
// id: any case of a UUID (and of a tagged UUID's UUID half), any case of a humane code.
func identSpellings(k ident.Kind, id string) []string {
	switch k {
	case ident.KindUUID:
		return []string{strings.ToUpper(id), strings.ToLower(id)}
	case ident.KindTagged:
		c := strings.IndexByte(id, ':')
		return []string{strings.ToUpper(id[:c]) + id[c:], strings.ToLower(id[:c]) + id[c:]}
	case ident.KindHumane:
		return []string{strings.ToUpper(id), strings.ToLower(id)}
	}
	return nil
}
