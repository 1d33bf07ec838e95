package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// snapshotReads answers the reads a client would make of the given aggregates, for comparison
// across a restart.
func snapshotReads(t testing.TB, base, key string, paths []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, p := range paths {
		for _, suffix := range []string{"?synchronous=true", "", "/length", "/events"} {
			c := dataCall(key, "GET", p+suffix, nil)
			r := do(base, c)
			if r.Err != nil {
				t.Fatalf("%s: %v", c, r.Err)
			}
			out[p+suffix] = []any{r.Status, r.JSON}
		}
	}
	return out
}

// TestRestartKeepsEverything writes several kinds of aggregate, restarts the server gracefully,
// and expects every read to answer the same.
func TestRestartKeepsEverything(t *testing.T) {
	s := newServer(t, serverOptions{})
	f := setup(t, s, suiteSpec(t))
	key := f.keys["prod"]["write"]
	user, order, ledger := newUUID(4), newUUID(4), newUUID(5)+":2026"
	writes := []struct {
		path string
		body any
	}{
		{"/user/" + user + "/was_created", actorBody(map[string]any{"name": "Alice", "email": "alice@example.com"}, nil)},
		{"/user/" + user + "/had_name_updated", actorBody(map[string]any{"name": "Alicia"}, map[string]any{"previous_length": 1})},
		{"/order/" + order, map[string]any{"events": []any{
			map[string]any{"type": "was_placed", "data": map[string]any{"total": 3}},
			map[string]any{"type": "had_item_added", "data": map[string]any{"sku": "A"}},
		}, "metadata": map[string]any{"actor": map[string]any{"type": "user", "id": user}}}},
		{"/ledger/" + ledger + "/entry_posted", actorBody(map[string]any{"amount": 500}, nil)},
		{"/config/global/was_updated", actorBody(map[string]any{"dark_mode": true}, nil)},
		{"/company_audit/all/RecordCreated", actorBody(map[string]any{}, nil)},
	}
	for _, w := range writes {
		send(t, s.url(), dataCall(key, "POST", w.path, w.body), 201, "write before restart")
	}
	paths := []string{"/user/" + user, "/order/" + order, "/ledger/" + ledger, "/config/global", "/company_audit/all", "/settings/global"}
	listing := []string{"/order", "/user?resolve=true&synchronous=true", "/ledger?limit=1"}
	before := snapshotReads(t, s.url(), key, paths)
	beforeList := map[string]any{}
	for _, l := range listing {
		beforeList[l] = do(s.url(), dataCall(key, "GET", l, nil)).JSON
	}

	s.restart(t)

	after := snapshotReads(t, s.url(), key, paths)
	for k, want := range before {
		if !reflect.DeepEqual(after[k], want) {
			t.Errorf("GET %s after restart:\n  got:  %s\n  want: %s", k, jsonString(after[k]), jsonString(want))
		}
	}
	for _, l := range listing {
		if got := do(s.url(), dataCall(key, "GET", l, nil)).JSON; !reflect.DeepEqual(got, beforeList[l]) {
			t.Errorf("GET %s after restart:\n  got:  %s\n  want: %s", l, jsonString(got), jsonString(beforeList[l]))
		}
	}
	if st := before["/user/"+user+"?synchronous=true"].([]any)[0]; st != 200 {
		t.Errorf("GET /user/%s before restart: status %v, want 200 (nothing to compare)", user, st)
	}
	// The restarted server keeps counting from the stored length, and its stream ids continue
	// above the ones it gave before the restart.
	r := send(t, s.url(), dataCall(key, "POST", "/user/"+user+"/had_name_updated",
		actorBody(map[string]any{"name": "Alison"}, map[string]any{"previous_length": 2})), 201, "OCC write after restart")
	evs, _ := lookup(before["/user/"+user+"/events"], "1.events")
	arr, _ := evs.([]any)
	if len(arr) == 0 {
		t.Fatalf("no events of /user/%s before the restart", user)
	}
	prev, _ := lookup(arr[len(arr)-1], "stream_id")
	if id, _ := r.obj()["stream_id"].(string); !streamIDLess(fmt.Sprint(prev), id) {
		t.Errorf("stream id after restart %q is not greater than %v from before", id, prev)
	}
}

// TestKill9KeepsAcknowledgedWrites kills the server with SIGKILL while writers are busy and
// expects every write that was answered 201 to be readable after a restart.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	s := newServer(t, serverOptions{})
	f := setup(t, s, suiteSpec(t))
	key := f.keys["prod"]["write"]
	base := s.url()

	type ack struct{ agg, streamID string }
	var mu sync.Mutex
	var acks []ack
	var stop atomic.Bool
	var wg sync.WaitGroup
	const writers = 8
	for w := 0; w < writers; w++ {
		agg := newUUID(4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var c call
				if i%4 == 3 {
					c = dataCall(key, "POST", "/counter/"+agg, map[string]any{
						"events":   []any{map[string]any{"type": "was_incremented", "data": map[string]any{}}, map[string]any{"type": "was_incremented", "data": map[string]any{}}},
						"metadata": map[string]any{"actor": map[string]any{"type": "system", "id": agg}},
					})
				} else {
					c = dataCall(key, "POST", "/counter/"+agg+"/was_incremented", actorBody(map[string]any{"i": i}, nil))
				}
				r := do(base, c)
				if r.Err != nil || r.Status != 201 {
					continue // the server is going down; only acknowledged writes count
				}
				mu.Lock()
				if id, ok := r.obj()["stream_id"].(string); ok {
					acks = append(acks, ack{agg, id})
				}
				if ids, ok := r.obj()["stream_ids"].([]any); ok {
					for _, x := range ids {
						acks = append(acks, ack{agg, fmt.Sprint(x)})
					}
				}
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.kill()
	stop.Store(true)
	wg.Wait()
	if len(acks) == 0 {
		t.Fatalf("no write was acknowledged before the kill; server log:\n%s", tail(s.logs()))
	}

	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	stored := map[string]map[string]bool{}
	for _, a := range acks {
		if stored[a.agg] != nil {
			continue
		}
		stored[a.agg] = map[string]bool{}
		r := send(t, s.url(), dataCall(key, "GET", "/counter/"+a.agg+"/events?count=1000", nil), 200, "events after kill -9")
		evs, _ := r.obj()["events"].([]any)
		for _, e := range evs {
			if m, ok := e.(map[string]any); ok {
				stored[a.agg][fmt.Sprint(m["stream_id"])] = true
			}
		}
		lr := send(t, s.url(), dataCall(key, "GET", "/counter/"+a.agg+"/length", nil), 200, "length after kill -9")
		if got := lr.obj()["length"]; got != float64(len(evs)) {
			t.Errorf("/counter/%s: length %v, but %d events", a.agg, got, len(evs))
		}
	}
	lost := 0
	for _, a := range acks {
		if !stored[a.agg][a.streamID] {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s to /counter/%s is missing after kill -9 and restart", a.streamID, a.agg)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes lost", lost, len(acks))
	}
	t.Logf("%d acknowledged writes checked after kill -9", len(acks))
}

// TestIdempotencyRetryAcrossRestart retries an idempotent write after a restart and expects the
// first answer replayed, not a second event.
func TestIdempotencyRetryAcrossRestart(t *testing.T) {
	s := newServer(t, serverOptions{})
	f := setup(t, s, suiteSpec(t))
	key := f.keys["prod"]["write"]
	order := newUUID(4)
	c := dataCall(key, "POST", "/order/"+order+"/was_placed", actorBody(map[string]any{"total": 9}, nil))
	c.Header["X-Idempotency-Key"] = []string{"order-" + order + "-was_placed"}
	first := send(t, s.url(), c, 201, "first idempotent write")

	s.restart(t)

	again := send(t, s.url(), c, 201, "idempotent retry after restart")
	if got := again.Header.Get("X-Idempotency-Replayed"); got != "true" {
		t.Errorf("retry after restart: X-Idempotency-Replayed %q, want \"true\"", got)
	}
	if !reflect.DeepEqual(again.JSON, first.JSON) {
		t.Errorf("retry after restart: body %s, want the first answer %s", again.Raw, first.Raw)
	}
	lr := send(t, s.url(), dataCall(key, "GET", "/order/"+order+"/length", nil), 200, "length after retry")
	if got := lr.obj()["length"]; got != float64(1) {
		t.Errorf("length after a replayed retry: got %v, want 1", got)
	}
}

// TestIdempotencyRetryAcrossCrash is the same retry after kill -9. Inferred: the Writing Events
// page caches every 2xx answer for 24 hours and names no exception for a crash, so a client
// that got 201 may rely on its retry being replayed.
func TestIdempotencyRetryAcrossCrash(t *testing.T) {
	s := newServer(t, serverOptions{})
	f := setup(t, s, suiteSpec(t))
	key := f.keys["prod"]["write"]
	order := newUUID(4)
	c := dataCall(key, "POST", "/order/"+order+"/was_placed", actorBody(map[string]any{"total": 9}, nil))
	c.Header["X-Idempotency-Key"] = []string{"order-" + order + "-was_placed"}
	first := send(t, s.url(), c, 201, "first idempotent write")

	s.crashRestart(t)

	again := send(t, s.url(), c, 201, "idempotent retry after kill -9")
	if got := again.Header.Get("X-Idempotency-Replayed"); got != "true" || !reflect.DeepEqual(again.JSON, first.JSON) {
		t.Errorf("retry after kill -9: replayed %q, body %s; want \"true\" and %s", got, again.Raw, first.Raw)
	}
	lr := send(t, s.url(), dataCall(key, "GET", "/order/"+order+"/length", nil), 200, "length after retry")
	if got := lr.obj()["length"]; got != float64(1) {
		t.Errorf("length after a retry across kill -9: got %v, want 1", got)
	}
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
