package e2e

import (
	"fmt"
	"net/url"
	"sort"
	"sync"
	"testing"
)

// TestListingPages checks the list endpoint's page sizes and cursor walk (Reading Aggregates §
// List aggregates: limit default 50, max 200; exclusive cursor; cursor omitted at the end; byte
// order).
func TestListingPages(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["test"]["write"]
	base := f.srv.url()
	const total = 230
	ids := make([]string, total)
	for i := range ids {
		ids[i] = newUUID(4)
	}
	ids[0], ids[1] = "global", newHumane()
	var wg sync.WaitGroup
	errs := make(chan string, total)
	sem := make(chan struct{}, 8)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := dataCall(key, "POST", "/bulk_item/"+id+"/was_created", actorBody(map[string]any{"id": id}, nil))
			if r := do(base, c); r.Status != 201 {
				errs <- fmt.Sprintf("%s: %s", c, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("setup write failed: %s", e)
	}
	sort.Strings(ids)

	page := func(query string) ([]string, any) {
		t.Helper()
		r := send(t, base, dataCall(key, "GET", "/bulk_item"+query, nil), 200, "list bulk_item"+query)
		arr, ok := r.obj()["data"].([]any)
		if !ok {
			t.Fatalf("GET /bulk_item%s: data is not an array: %s", query, r)
		}
		out := make([]string, len(arr))
		for i, x := range arr {
			out[i] = fmt.Sprint(x)
		}
		return out, r.obj()["cursor"]
	}

	got, cursor := page("")
	if len(got) != 50 {
		t.Errorf("GET /bulk_item: %d ids, want the default page of 50", len(got))
	}
	if cursor != any(ids[49]) {
		t.Errorf("GET /bulk_item: cursor %v, want the last id of the page %q", cursor, ids[49])
	}
	got, _ = page("?limit=500")
	if len(got) != 200 {
		t.Errorf("GET /bulk_item?limit=500: %d ids, want the maximum of 200 (inferred: limit is capped, not refused)", len(got))
	}

	var walked []string
	next := ""
	for pages := 0; pages < 10; pages++ {
		q := "?limit=200"
		if next != "" {
			q += "&cursor=" + url.QueryEscape(next)
		}
		got, c := page(q)
		walked = append(walked, got...)
		if c == nil {
			break
		}
		next = fmt.Sprint(c)
	}
	if fmt.Sprint(walked) != fmt.Sprint(ids) {
		t.Errorf("walking the pages with the cursor: got %d ids, want all %d in byte order\n  got:  %v\n  want: %v", len(walked), len(ids), walked, ids)
	}
}

// TestEventPages checks the events endpoint's page sizes (Reading Aggregates § Get events:
// count default 100, max 1,000; start exclusive; fewer than count means the end).
func TestEventPages(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["test"]["write"]
	base := f.srv.url()
	path := "/counter/" + newUUID(4)
	const batches, per = 22, 50
	for b := 0; b < batches; b++ {
		evs := make([]any, per)
		for i := range evs {
			evs[i] = map[string]any{"type": "was_incremented", "data": map[string]any{"i": b*per + i}}
		}
		send(t, base, dataCall(key, "POST", path, map[string]any{"events": evs,
			"metadata": map[string]any{"actor": map[string]any{"type": "system", "id": "global"}}}), 201, "batch setup")
	}
	events := func(query string) []any {
		t.Helper()
		r := send(t, base, dataCall(key, "GET", path+"/events"+query, nil), 200, "events"+query)
		evs, ok := r.obj()["events"].([]any)
		if !ok {
			t.Fatalf("GET %s/events%s: events is not an array: %s", path, query, r)
		}
		return evs
	}
	if n := len(events("")); n != 100 {
		t.Errorf("GET events: %d, want the default of 100", n)
	}
	if n := len(events("?count=5000")); n != 1000 {
		t.Errorf("GET events?count=5000: %d, want the maximum of 1,000 (inferred: count is capped, not refused)", n)
	}
	seen := 0
	start := ""
	var last string
	for pages := 0; pages < 20; pages++ {
		q := "?count=400"
		if start != "" {
			q += "&start=" + url.QueryEscape(start)
		}
		evs := events(q)
		for _, e := range evs {
			m, _ := e.(map[string]any)
			sid := fmt.Sprint(m["stream_id"])
			if d, _ := m["data"].(map[string]any); d == nil || d["i"] != float64(seen) {
				t.Fatalf("event %d: got %v, want data.i %d (stream order, no gaps, no repeats)", seen, e, seen)
			}
			if last != "" && !streamIDLess(last, sid) {
				t.Fatalf("stream ids not strictly increasing: %s then %s", last, sid)
			}
			last = sid
			seen++
		}
		if len(evs) < 400 {
			break
		}
		start = last
	}
	if seen != batches*per {
		t.Errorf("paging through events with start: saw %d, want %d", seen, batches*per)
	}
}
