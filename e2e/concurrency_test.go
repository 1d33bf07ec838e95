package e2e

import (
	"fmt"
	"sync"
	"testing"
)

// actorBody is an event body with data and a user actor, plus extra metadata fields.
func actorBody(data map[string]any, meta map[string]any) map[string]any {
	m := map[string]any{"actor": map[string]any{"type": "user", "id": "550e8400-e29b-41d4-a716-446655440001"}}
	for k, v := range meta {
		m[k] = v
	}
	return map[string]any{"data": data, "metadata": m}
}

// mustStatus fails t unless r has status want.
func mustStatus(t testing.TB, what string, c call, r reply, want int) {
	t.Helper()
	if r.Err != nil || r.Status != want {
		t.Fatalf("%s\n  request: %s\n  got:  %s\n  want: status %d", what, c, r, want)
	}
}

// send is do with a check of the status.
func send(t testing.TB, base string, c call, want int, what string) reply {
	t.Helper()
	r := do(base, c)
	mustStatus(t, what, c, r, want)
	return r
}

// TestOCCWritersRace has 32 writers race on one aggregate, each reading the length and writing
// with it as previous_length (Atomicity and Concurrency § External OCC). For every length
// exactly one writer wins; every loser gets 409; the final length is the number of 201s.
func TestOCCWritersRace(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["prod"]["write"]
	base := f.srv.url()
	id := newUUID(4)
	path := "/counter/" + id
	const writers, attempts = 32, 6

	type outcome struct {
		prev   int
		status int
		body   string
	}
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for a := 0; a < attempts; a++ {
				lr := do(base, dataCall(key, "GET", path+"/length", nil))
				prev := 0
				switch {
				case lr.Status == 200:
					n, _ := lr.obj()["length"].(float64)
					prev = int(n)
				case lr.Status == 404:
				default:
					mu.Lock()
					outcomes = append(outcomes, outcome{-1, lr.Status, "GET length: " + lr.String()})
					mu.Unlock()
					return
				}
				r := do(base, dataCall(key, "POST", path+"/was_incremented", actorBody(map[string]any{}, map[string]any{"previous_length": prev})))
				mu.Lock()
				outcomes = append(outcomes, outcome{prev, r.Status, r.String()})
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()

	winners := map[int]int{}
	created := 0
	for _, o := range outcomes {
		switch o.status {
		case 201:
			winners[o.prev]++
			created++
		case 409:
		default:
			t.Errorf("writer with previous_length %d: got %s, want 201 or 409", o.prev, o.body)
		}
	}
	for prev, n := range winners {
		if n != 1 {
			t.Errorf("previous_length %d: %d writers got 201, want exactly 1", prev, n)
		}
	}
	for l := 0; l < created; l++ {
		if winners[l] != 1 {
			t.Errorf("previous_length %d: no winner, yet %d writes succeeded (lengths must be dense)", l, created)
		}
	}
	lr := send(t, base, dataCall(key, "GET", path+"/length", nil), 200, "length after the race")
	if got := lr.obj()["length"]; got != float64(created) {
		t.Errorf("final length: got %v, want %d (the number of 201s)", got, created)
	}
	ar := send(t, base, dataCall(key, "GET", path+"?synchronous=true", nil), 200, "aggregate after the race")
	if got, _ := lookup(ar.JSON, "data.n"); got != float64(created) {
		t.Errorf("data.n after %d increments: got %v", created, got)
	}
	er := send(t, base, dataCall(key, "GET", path+"/events?count=1000", nil), 200, "events after the race")
	evs, _ := er.obj()["events"].([]any)
	if len(evs) != created {
		t.Errorf("events: got %d, want %d", len(evs), created)
	}
	ids := make([]string, 0, len(evs))
	for _, e := range evs {
		s, _ := e.(map[string]any)["stream_id"].(string)
		ids = append(ids, s)
	}
	for i := 1; i < len(ids); i++ {
		if !streamIDLess(ids[i-1], ids[i]) {
			t.Errorf("stream ids not strictly increasing: %s then %s", ids[i-1], ids[i])
		}
	}
	if created == 0 {
		t.Fatalf("no writer succeeded: %v", outcomes)
	}
	t.Logf("%d attempts, %d won", len(outcomes), created)
}

// streamIDLess orders "<ms>-<seq>" stream ids numerically, as Redis does.
func streamIDLess(a, b string) bool {
	var am, as, bm, bs int64
	fmt.Sscanf(a, "%d-%d", &am, &as)
	fmt.Sscanf(b, "%d-%d", &bm, &bs)
	if am != bm {
		return am < bm
	}
	return as < bs
}

// race runs fn from n goroutines released together and collects their replies.
func race(n, each int, fn func(w, i int) reply) []reply {
	var mu sync.Mutex
	var out []reply
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				r := fn(w, i)
				mu.Lock()
				out = append(out, r)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestInternalOCCLosesNoWrite has 32 writers append to one aggregate without previous_length
// (Atomicity and Concurrency § Internal OCC: automatic retry, 409 only under sustained
// contention). Every write answered 201 is counted exactly once, and every stream id is unique.
func TestInternalOCCLosesNoWrite(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["staging"]["write"]
	base := f.srv.url()
	path := "/counter/" + newUUID(4)
	replies := race(32, 4, func(w, i int) reply {
		return do(base, dataCall(key, "POST", path+"/was_incremented", actorBody(map[string]any{}, nil)))
	})
	created := 0
	seen := map[string]bool{}
	for _, r := range replies {
		switch r.Status {
		case 201:
			created++
			id, _ := r.obj()["stream_id"].(string)
			if seen[id] {
				t.Errorf("stream id %q answered twice", id)
			}
			seen[id] = true
		case 409:
		default:
			t.Errorf("concurrent write: got %s, want 201 (or 409 under sustained contention)", r)
		}
	}
	got := send(t, base, dataCall(key, "GET", path+"?synchronous=true", nil), 200, "aggregate after the race").JSON
	if n, _ := lookup(got, "metadata.length"); n != float64(created) {
		t.Errorf("length: got %v, want %d (the number of 201s)", n, created)
	}
	if n, _ := lookup(got, "data.n"); n != float64(created) {
		t.Errorf("data.n: got %v, want %d increments", n, created)
	}
	if created == 0 {
		t.Errorf("no write of %d succeeded", len(replies))
	}
}

// TestSkipOCCAllSucceed has 32 writers append with skip_occ to an event type that allows it
// (Atomicity and Concurrency § Disabling OCC: catches nothing): every write succeeds.
func TestSkipOCCAllSucceed(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["staging"]["write"]
	base := f.srv.url()
	path := "/audit/" + newUUID(4)
	const writers, each = 32, 3
	replies := race(writers, each, func(w, i int) reply {
		return do(base, dataCall(key, "POST", path+"/entry_was_added",
			actorBody(map[string]any{"entry": fmt.Sprintf("%d-%d", w, i)}, map[string]any{"skip_occ": true})))
	})
	for _, r := range replies {
		if r.Status != 201 {
			t.Errorf("skip_occ write: got %s, want 201", r)
		}
	}
	lr := send(t, base, dataCall(key, "GET", path+"/length", nil), 200, "length")
	if got := lr.obj()["length"]; got != float64(writers*each) {
		t.Errorf("length: got %v, want %d", got, writers*each)
	}
}

// TestConcurrentBatchesStayTogether has 16 writers post batches of three to one aggregate.
// Inferred from Batch Operations (all events written atomically after one OCC check): a
// batch's events are adjacent in the stream, in their order, never interleaved with another's.
func TestConcurrentBatchesStayTogether(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["staging"]["write"]
	base := f.srv.url()
	path := "/counter/" + newUUID(4)
	replies := race(16, 3, func(w, i int) reply {
		evs := []any{}
		for j := 0; j < 3; j++ {
			evs = append(evs, map[string]any{"type": "was_incremented", "data": map[string]any{"batch": fmt.Sprintf("%d-%d", w, i), "j": j}})
		}
		return do(base, dataCall(key, "POST", path, map[string]any{"events": evs,
			"metadata": map[string]any{"actor": map[string]any{"type": "system", "id": "global"}}}))
	})
	created := 0
	for _, r := range replies {
		switch r.Status {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("batch: got %s, want 201 (or 409)", r)
		}
	}
	er := send(t, base, dataCall(key, "GET", path+"/events?count=1000", nil), 200, "events")
	evs, _ := er.obj()["events"].([]any)
	if len(evs) != 3*created {
		t.Fatalf("events: got %d, want %d (3 per accepted batch)", len(evs), 3*created)
	}
	for i := 0; i+2 < len(evs); i += 3 {
		b0, _ := lookup(evs[i], "data.batch")
		for j := 0; j < 3; j++ {
			b, _ := lookup(evs[i+j], "data.batch")
			n, _ := lookup(evs[i+j], "data.j")
			if b != b0 || n != float64(j) {
				t.Fatalf("events %d..%d are not one batch in order: %v", i, i+2, evs[i:i+3])
			}
		}
	}
}
