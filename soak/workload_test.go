package soak

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestNewUUIDIsVersion4(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := newUUID(rng)
		if !re.MatchString(id) {
			t.Fatalf("got %q, want a version-4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("got %q twice", id)
		}
		seen[id] = true
	}
	if a, b := newUUID(rand.New(rand.NewPCG(7, 7))), newUUID(rand.New(rand.NewPCG(7, 7))); a != b {
		t.Errorf("one seed gave %q and %q, want the same id", a, b)
	}
}

func TestConflictIsTheDocumented409Only(t *testing.T) {
	w := &workload{count: &counters{}}
	cases := []struct {
		status int
		body   string
		want   bool
	}{
		{409, `{"ok":false,"error":"Concurrent write detected. Stream has 6 events, expected 5.","code":"conflict"}`, true},
		{409, `{"ok":false,"error":"x","code":"validation_failed"}`, false},
		{201, `{"ok":true,"code":"conflict"}`, false},
		{409, `not json`, false},
	}
	for _, c := range cases {
		if got := w.conflict(c.status, []byte(c.body)); got != c.want {
			t.Errorf("%d %s: got %v, want %v", c.status, c.body, got, c.want)
		}
	}
	if n := w.count.conflicts.Load(); n != 1 {
		t.Errorf("got %d conflicts counted, want 1", n)
	}
}
