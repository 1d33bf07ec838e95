package e2e

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// scheduledOperatorCall is a /_admin/... call with the operator token and the staging headers.
func scheduledOperatorCall(f *fixture, method, path string, body any) call {
	c := dataCall(f.token, method, path, body)
	c.Header["X-J17-Instance"] = []string{f.instance}
	c.Header["X-J17-Environment"] = []string{"staging"}
	return c
}

// TestScheduledKill9WhileFiring kills the server with SIGKILL while it fires a batch of due
// scheduled events (run_due in staging), restarts it, and fires again: every schedule has fired
// exactly once, none is lost and none fired twice (firing and marking fired are one record).
func TestScheduledKill9WhileFiring(t *testing.T) {
	s := newServer(t, serverOptions{})
	f := setup(t, s, suiteSpec(t))
	raw, err := os.ReadFile("../api/testdata/implications/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	f.deploy(t, "staging", spec)
	key := f.keys["staging"]["write"]
	actor := newUUID(4)
	const n = 150
	for i := 0; i < n; i++ {
		r := do(s.url(), dataCall(key, "POST", "/cart/"+newUUID(4)+"/had_item_added", map[string]any{
			"data": map[string]any{}, "metadata": map[string]any{"actor": map[string]any{"type": "user", "id": actor}},
		}))
		if r.Status != 201 {
			t.Fatalf("schedule %d: %s", i, r)
		}
	}
	future := time.Now().Add(48 * time.Hour).Unix()
	started := make(chan struct{})
	go func() {
		close(started)
		do(s.url(), scheduledOperatorCall(f, "POST", "/_admin/scheduled/run_due", map[string]any{"now": future}))
	}()
	<-started
	// Kill once some events have fired, before all have.
	deadline := time.Now().Add(10 * time.Second)
	var before float64
	for time.Now().Before(deadline) && before == 0 {
		r := do(s.url(), dataCall(key, "GET", "/notification/"+actor+"/length", nil))
		before, _ = r.obj()["length"].(float64)
		time.Sleep(time.Millisecond)
	}
	s.crashRestart(t)
	t.Logf("killed with %v of %d scheduled events fired", before, n)

	r := do(s.url(), scheduledOperatorCall(f, "POST", "/_admin/scheduled/run_due", map[string]any{"now": future}))
	if r.Status != 200 {
		t.Fatalf("run_due after restart: %s", r)
	}
	fired := do(s.url(), scheduledOperatorCall(f, "GET", "/_admin/scheduled?status=fired&limit=1000", nil))
	if total, _ := fired.obj()["total"].(float64); int(total) != n {
		t.Errorf("got %v fired schedules after the crash, want %d", fired.obj()["total"], n)
	}
	pending := do(s.url(), scheduledOperatorCall(f, "GET", "/_admin/scheduled?status=pending", nil))
	if total, _ := pending.obj()["total"].(float64); total != 0 {
		t.Errorf("got %v pending schedules, want 0", total)
	}
	evs := do(s.url(), dataCall(key, "GET", "/notification/"+actor+"/events?count=1000", nil))
	list, _ := evs.obj()["events"].([]any)
	seen := map[string]bool{}
	for _, e := range list {
		meta, _ := e.(map[string]any)["metadata"].(map[string]any)
		sch, _ := meta["scheduled"].(map[string]any)
		id, _ := sch["scheduled_id"].(string)
		if seen[id] {
			t.Errorf("scheduled %s fired twice", id)
		}
		seen[id] = true
	}
	if len(list) != n || len(seen) != n {
		t.Errorf("got %d fired events for %d distinct schedules, want %d of each", len(list), len(seen), n)
	}
}
