package tick

import (
	"path/filepath"
	"testing"
	"unsafe"
)

// lendCheck replays events twice, decoded (Apply) and as raw JSON in one
// buffer that is overwritten after every event (ApplyJSON), and fails if
// the results differ: ApplyJSON reads raw only during the call, so nothing
// of the buffer may show in the state.
func lendCheck(t *testing.T, handlers map[string]*Handler, state Value, events []Value) {
	t.Helper()
	decoded, lent := NewReplayer(handlers, state), NewReplayer(handlers, state)
	var buf []byte
	for i, ev := range events {
		errA := decoded.Apply(caseEvent(ev))
		raw := Object(append([]Member{{Key: "type", Value: String("test")}}, ev.Members()...)...).String()
		buf = append(buf[:0], raw...)
		errB := lent.ApplyJSON(buf)
		for j := range buf {
			buf[j] = '#'
		}
		if (errA == nil) != (errB == nil) {
			t.Fatalf("event %d: Apply: %v, ApplyJSON: %v", i, errA, errB)
		}
		if errA != nil {
			return
		}
	}
	if a, b := decoded.State().String(), lent.State().String(); a != b {
		t.Fatalf("Apply gives %s\nApplyJSON gives %s", a, b)
	}
}

// TestApplyJSONKeepsNoBuffer runs every replay and apply example of the docs
// through lendCheck.
func TestApplyJSONKeepsNoBuffer(t *testing.T) {
	files, err := filepath.Glob("testdata/docs/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	n := 0
	for _, file := range files {
		for _, c := range readCases(t, file) {
			if c.cmd != "apply" && c.cmd != "replay" {
				continue
			}
			in, err := ParseJSON([]byte(c.input))
			if err != nil {
				t.Fatal(err)
			}
			handlers := map[string]*Handler{}
			if h := in.Get("handler"); !h.IsMissing() {
				if handlers["test"], err = CompileHandlerValue(h); err != nil {
					continue
				}
			}
			for _, m := range in.Get("handlers").Members() {
				if handlers[m.Key], err = CompileHandlerValue(m.Value); err != nil {
					continue
				}
			}
			events := in.Get("events").Items()
			if ev := in.Get("event"); !ev.IsMissing() {
				events = []Value{ev}
			}
			t.Run(filepath.Base(file)+"/"+c.name, func(t *testing.T) {
				lendCheck(t, handlers, in.Get("state"), events)
			})
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d cases", n)
	}
}

// TestApplyJSONKeepsNoBufferPaths covers each way a value made from the
// event reaches state: under "$.data" (which moves the data alone), the
// other members of "$", bindings, a timestamp that is not a number, data
// parsed by a predicate before it is stored, merged members and keys of
// *_at.
func TestApplyJSONKeepsNoBufferPaths(t *testing.T) {
	hs := compileAll(t, map[string]string{
		"data":    `[{"set": {"target": "d", "value": "$.data"}}, {"append": {"target": "xs", "value": "$.data.items[0]"}}]`,
		"members": `[{"set": {"target": "k", "value": "$.key"}}, {"set": {"target": "t", "value": {"type": "$.type", "id": "$.id", "md": "$.metadata"}}}]`,
		"let": `[{"let": {"name": "$hit", "find": {"in": "$.data.items", "where": {"id": "$.data.want"}}}},
			{"set": {"target": "hit", "value": "$hit"}}]`,
		"stamp":  `[{"set": {"target": "ts", "value": "$.metadata.timestamp"}}]`,
		"parsed": `[{"if": {"equals": ["$.data.items", [{"id": "a"}]]}, "then": [{"set": {"target": "p", "value": "$.data.items"}}]}]`,
		"keyed":  `[{"set_at": {"target": "m", "key": "$.data.want", "value": "$.data"}}, {"increment_at": {"target": "c", "key": "$.data.want", "by": 1}}]`,
		"merged": `[{"merge": {"target": "g", "value": "$.data"}}, {"set": {"target": "s", "value": "$.data.want"}}]`,
		"string": `[{"set": {"target": "str", "value": "$.data"}}]`,
	})
	var evs []Value
	for _, raw := range []string{
		`{"type": "data", "key": "a:1", "data": {"items": [{"id": "a"}], "want": "a"}, "metadata": {"timestamp": 1}}`,
		`{"type": "members", "key": "a:1", "data": {}, "metadata": {"timestamp": 2, "actor": {"id": "u1"}}}`,
		`{"type": "let", "key": "a:1", "data": {"items": [{"id": "b", "n": "x"}, {"id": "a", "n": "y"}], "want": "a"}, "metadata": {"timestamp": 3}}`,
		`{"type": "stamp", "key": "a:1", "data": {}, "metadata": {"actor": "u2", "timestamp": "three"}}`,
		`{"type": "stamp", "key": "a:1", "data": {}, "metadata": {"timestamp": 4}}`,
		`{"type": "parsed", "key": "a:1", "data": {"items": [{"id": "a"}]}, "metadata": {"timestamp": 5}}`,
		`{"type": "keyed", "key": "a:1", "data": {"want": "k\u00e9y", "v": 1}, "metadata": {"timestamp": 6}}`,
		`{"type": "merged", "key": "a:1", "data": {"want": "w", "x": {"y": "z"}}, "metadata": {"timestamp": 7}}`,
		`{"type": "string", "key": "a:1", "data": "plain", "metadata": {"timestamp": 8}}`,
	} {
		evs = append(evs, mustJSON(t, raw))
	}
	// One event at a time, from the empty state, and all in one stream.
	for i := range evs {
		lendCheck(t, hs, Value{}, evs[i:i+1])
	}
	lendCheck(t, hs, Value{}, evs)
}

// TestApplyJSONGivesBackNodes: an event whose handler keeps nothing of its
// text (an increment) costs no allocation, since its lazy nodes are reused
// by the next event.
func TestApplyJSONGivesBackNodes(t *testing.T) {
	hs := compileAll(t, map[string]string{"e": `[{"increment": {"target": "n", "by": "$.data.by"}}]`})
	rp := NewReplayer(hs, Value{})
	raw := []byte(`{"key":"a:1","type":"e","data":{"by":2,"note":"x"},"metadata":{"timestamp":1,"actor":{"id":"u"}}}`)
	if err := rp.ApplyJSON(raw); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := rp.ApplyJSON(raw); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
	if got := rp.State().Get("n").Num(); got != 2*1002 {
		t.Errorf("n = %v, want %v", got, 2*1002)
	}
}

// TestApplyJSONKeepsNoBufferAlive: once the state is taken, no lazy node in
// the replay's chunk, which the state keeps alive, refers to a caller's
// buffer, whether its event was kept, given back or named "data" twice.
func TestApplyJSONKeepsNoBufferAlive(t *testing.T) {
	hs := compileAll(t, map[string]string{
		"keep": `[{"append": {"target": "xs", "value": "$.data"}}]`,
		"skip": `[{"increment": {"target": "n", "by": "$.data.by"}}]`,
	})
	rp := NewReplayer(hs, Value{})
	var bufs [][]byte
	for i := range 200 {
		var raw string
		switch i % 3 {
		case 0:
			raw = `{"type":"keep","data":{"id":"a"},"metadata":{"timestamp":1}}`
		case 1:
			raw = `{"type":"skip","data":{"by":1},"metadata":{"timestamp":2}}`
		default:
			raw = `{"type":"keep","data":{"id":"old"},"metadata":{"timestamp":3},"data":{"id":"b"}}`
		}
		buf := []byte(raw)
		bufs = append(bufs, buf)
		if err := rp.ApplyJSON(buf); err != nil {
			t.Fatal(err)
		}
	}
	state := rp.State()
	if n := state.Get("xs").Len(); n != 133 {
		t.Fatalf("%d items kept, want 133", n)
	}
	// The current chunk holds kept nodes, given-back ones and those of a
	// repeated "data".
	for i := range rp.p.lazy[:cap(rp.p.lazy)] {
		ln := &rp.p.lazy[:cap(rp.p.lazy)][i]
		for _, buf := range bufs {
			at := uintptr(unsafe.Pointer(unsafe.StringData(ln.t.raw)))
			if ln.t.raw != "" && at >= uintptr(unsafe.Pointer(&buf[0])) && at < uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf)) {
				t.Fatalf("lazy node %d refers to the caller's buffer %q", i, buf)
			}
		}
	}
}
