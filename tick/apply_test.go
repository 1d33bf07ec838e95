package tick

import (
	"errors"
	"strings"
	"testing"
)

func mustJSON(t *testing.T, s string) Value {
	t.Helper()
	v, err := ParseJSON([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func mustHandler(t *testing.T, s string) *Handler {
	t.Helper()
	h, err := CompileHandler([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return h
}

// Every operation must leave the state it was given as it was: caches and
// snapshots hand the same state to many readers.
func TestApplyNeverModifiesInput(t *testing.T) {
	state := `{"a": {"b": 1}, "items": [{"id": 1, "n": 1}, {"id": 2, "n": 2}], "tags": ["x"], "m": {"k": {"v": 1}}, "c": 1}`
	for _, h := range []string{
		`[{"set": {"target": "a.b", "value": 2}}]`,
		`[{"set": {"target": "", "value": {}}}]`,
		`[{"merge": {"target": "a", "value": {"z": 1}}}]`,
		`[{"append": {"target": "tags", "value": "y"}}]`,
		`[{"remove": {"target": "tags", "value": "x"}}]`,
		`[{"remove": {"target": "items", "where": {"id": 1}}}]`,
		`[{"increment": {"target": "c", "by": 1}}]`,
		`[{"filter": {"target": "items", "keep": {"equals": ["$item.id", 2]}}}]`,
		`[{"map": {"target": "items", "apply": [{"set": {"target": "n", "value": 0}}]}}]`,
		`[{"update_where": {"target": "items", "match": {"id": 2}, "merge": {"n": 9}}}]`,
		`[{"upsert": {"target": "items", "match": {"id": 1}, "value": {"id": 1}}}]`,
		`[{"append_unique": {"target": "tags", "value": "z"}}]`,
		`[{"set_at": {"target": "m", "key": "k", "value": 0}}]`,
		`[{"merge_at": {"target": "m", "key": "k", "value": {"w": 2}}}]`,
		`[{"remove_at": {"target": "m", "key": "k"}}]`,
		`[{"increment_at": {"target": "m", "key": "j", "by": 1}}]`,
	} {
		before := mustJSON(t, state)
		want := before.String()
		after, err := mustHandler(t, h).Apply(before, &Event{Metadata: mustJSON(t, `{"timestamp": 5}`)})
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		if got := before.String(); got != want {
			t.Errorf("%s modified its input: got %s, want %s", h, got, want)
		}
		if after.String() == want {
			t.Errorf("%s: state unchanged: %s", h, after)
		}
	}
}

// A value stored in two places must not change in both when one changes.
func TestApplyNoAliasing(t *testing.T) {
	h := mustHandler(t, `[
		{"set": {"target": "copy", "value": "@.orig"}},
		{"set": {"target": "copy.x", "value": 2}},
		{"let": {"name": "$f", "find": {"in": "list", "where": {"id": 1}}}},
		{"update_where": {"target": "list", "match": {"id": 1}, "merge": {"v": "changed"}}},
		{"set": {"target": "bound", "value": "$f.v"}}
	]`)
	rp := NewReplayer(map[string]*Handler{"e": h}, mustJSON(t, `{"orig": {"x": 1}, "list": [{"id": 1, "v": "first"}]}`))
	if err := rp.Apply(&Event{Type: "e"}); err != nil {
		t.Fatal(err)
	}
	got := rp.State()
	if x := got.Get("orig").Get("x").Num(); x != 1 {
		t.Errorf("orig.x: got %v, want 1", x)
	}
	if x := got.Get("copy").Get("x").Num(); x != 2 {
		t.Errorf("copy.x: got %v, want 2", x)
	}
	if b := got.Get("bound").Str(); b != "first" {
		t.Errorf("let binding: got %q, want the element as it was when bound, \"first\"", b)
	}
}

// State() hands out a frozen value; later events must not change it.
func TestReplayerStateIsFrozen(t *testing.T) {
	hs := map[string]*Handler{
		"add": mustHandler(t, `[{"append": {"target": "items", "value": "$.data.v"}}, {"increment": {"target": "n", "by": 1}}]`),
	}
	rp := NewReplayer(hs, Value{})
	for i := range 3 {
		if err := rp.ApplyJSON([]byte(`{"type": "add", "data": {"v": ` + string(rune('0'+i)) + `}, "metadata": {"timestamp": 10}}`)); err != nil {
			t.Fatal(err)
		}
	}
	snap := rp.State()
	want := snap.String()
	if err := rp.ApplyJSON([]byte(`{"type": "add", "data": {"v": 9}, "metadata": {"timestamp": 11}}`)); err != nil {
		t.Fatal(err)
	}
	if got := snap.String(); got != want {
		t.Errorf("snapshot changed: got %s, want %s", got, want)
	}
	if got := rp.State().String(); got != `{"items":[0,1,2,9],"n":4,"created_at":10,"updated_at":11}` {
		t.Errorf("got %s", got)
	}
	if rp.Applied() != 4 {
		t.Errorf("applied: got %d, want 4", rp.Applied())
	}
}

func TestApplyRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, handler, state, data string
		sentinel                   error
		want                       string
	}{
		{"missing path", `[{"set": {"target": "a", "value": "$.data.x"}}]`, `{}`, `{}`, ErrNotFound, "/0/set/value: path $.data.x not found"},
		{"append to object", `[{"append": {"target": "a", "value": 1}}]`, `{"a": {}}`, `{}`, ErrType, `/0/append: target "a" is object, not an array`},
		{"set through number", `[{"set": {"target": "a.b", "value": 1}}]`, `{"a": 5}`, `{}`, ErrType, `cannot reach target "a.b": "a" is number`},
		{"merge non-object", `[{"merge": {"target": "a", "value": "$.data.x"}}]`, `{}`, `{"x": [1]}`, ErrType, "merge value must be an object, not array"},
		{"by not number", `[{"increment": {"target": "a", "by": "$.data.x"}}]`, `{}`, `{"x": "5"}`, ErrType, "by must be a number, not string"},
		{"key not string", `[{"set_at": {"target": "m", "key": "$.data.k", "value": 1}}]`, `{}`, `{"k": 5}`, ErrType, "key must resolve to a string, not number"},
		{"merge_at onto scalar", `[{"merge_at": {"target": "m", "key": "k", "value": {"a": 1}}}]`, `{"m": {"k": 3}}`, `{}`, ErrType, `key "k" holds number, not an object`},
		{"update_where non-object item", `[{"update_where": {"target": "l", "match": {"equals": [1, 1]}, "merge": {"a": 1}}}]`, `{"l": [3]}`, `{}`, ErrType, "item 0 of \"l\" is number"},
		{"missing path inside an object operand", `[{"set": {"target": "a", "value": "$.data"}}, {"if": {"equals": [{"x": "$.data.missing"}, 1]}, "then": []}]`, `{}`, `{}`, ErrNotFound, "/1/if/equals/0/x: path $.data.missing not found"},
	} {
		h := mustHandler(t, tc.handler)
		state := mustJSON(t, tc.state)
		_, err := h.Apply(state, &Event{Data: mustJSON(t, tc.data)})
		if err == nil || !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %v containing %q", tc.name, err, tc.sentinel, tc.want)
		}
	}
}

func TestNoOpsOnMissingTargets(t *testing.T) {
	h := mustHandler(t, `[
		{"remove": {"target": "a", "value": 1}},
		{"filter": {"target": "b", "keep": {"equals": [1, 1]}}},
		{"map": {"target": "c", "apply": [{"set": {"target": "x", "value": 1}}]}},
		{"update_where": {"target": "d", "match": {"id": 1}, "merge": {"x": 1}}},
		{"remove_at": {"target": "e", "key": "k"}},
		{"set": {"target": "f", "value": "$.data.f?"}},
		{"append": {"target": "g", "value": "$.data.g?"}}
	]`)
	got, err := h.Run(mustJSON(t, `{"keep": true}`), &Event{Data: mustJSON(t, `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != `{"keep":true}` {
		t.Errorf("got %s, want {\"keep\":true}", got)
	}
}

// Compiled handlers and the values they return are shared between
// goroutines; run with -race.
func TestApplyConcurrent(t *testing.T) {
	h := mustHandler(t, `[{"append": {"target": "items", "value": "$.data"}}, {"increment": {"target": "n", "by": 1}}, {"merge": {"target": "", "value": {"last": "$.data.v"}}}]`)
	state := mustJSON(t, `{"items": [{"v": 0}], "n": 1, "nested": {"a": [1, 2]}}`)
	want := state.String()
	done := make(chan string, 8)
	for g := range 8 {
		go func() {
			s := state
			for i := range 50 {
				var err error
				if s, err = h.Apply(s, &Event{Data: Object(Member{Key: "v", Value: Number(float64(g*100 + i))}), Metadata: parseTestJSON(`{"timestamp": 1}`)}); err != nil {
					done <- err.Error()
					return
				}
			}
			done <- s.Get("n").String()
		}()
	}
	for range 8 {
		if got := <-done; got != "51" {
			t.Errorf("got n=%s, want 51", got)
		}
	}
	if state.String() != want {
		t.Errorf("shared state changed: got %s, want %s", state, want)
	}
}

func parseTestJSON(s string) Value {
	v, err := ParseJSON([]byte(s))
	if err != nil {
		panic("BUG: bad test JSON: " + err.Error())
	}
	return v
}

func TestNilEvent(t *testing.T) {
	h := mustHandler(t, `[{"set": {"target": "a", "value": "$.key"}}]`)
	if got, err := h.Apply(Value{}, nil); err != nil || got.String() != `{"a":""}` {
		t.Errorf("Apply with nil event: got %s %v, want {\"a\":\"\"}", got, err)
	}
	if err := NewReplayer(map[string]*Handler{"e": h}, Value{}).Apply(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Replayer.Apply(nil): got %v, want ErrInvalid", err)
	}
}

// Upsert and remove where match items by field wherever the items come
// from: event data kept as text (ApplyJSON) or decoded (Apply), numbers as
// well as strings, and an item that is no object or lacks the field reads
// the field as null.
func TestMatchByField(t *testing.T) {
	h, err := CompileHandler([]byte(`[
		{"if": {"equals": ["$.data.op", "add"]}, "then": [{"append": {"target": "items", "value": "$.data.item"}}]},
		{"if": {"equals": ["$.data.op", "put"]}, "then": [{"upsert": {"target": "items", "match": {"sku": "$.data.item.sku"}, "value": "$.data.item"}}]},
		{"if": {"equals": ["$.data.op", "drop"]}, "then": [{"remove": {"target": "items", "where": {"sku": "$.data.sku"}}}]},
		{"if": {"equals": ["$.data.op", "dropn"]}, "then": [{"remove": {"target": "items", "where": {"n": "$.data.n"}}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]*Handler{"test": h}
	var events []Value
	for _, raw := range []string{
		`{"op": "add", "item": {"sku": "a", "n": 1}}`,
		`{"op": "add", "item": {"sku": "b", "n": 1}}`,
		`{"op": "add", "item": 7}`,
		`{"op": "add", "item": {"n": 2}}`,
		`{"op": "add", "item": {"sku": "a", "n": 3}}`,
		`{"op": "put", "item": {"sku": "b", "n": 4}}`,
		`{"op": "drop", "sku": "a"}`,
		`{"op": "drop"}`,
		`{"op": "dropn", "n": 4}`,
	} {
		data, err := ParseJSON([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, Object(Member{Key: "data", Value: data}))
	}
	for _, c := range []struct {
		events int
		want   string
	}{
		{6, `{"items": [{"sku": "a", "n": 1}, 7, {"n": 2}, {"sku": "a", "n": 3}, {"sku": "b", "n": 4}]}`},
		{7, `{"items": [7, {"n": 2}, {"sku": "b", "n": 4}]}`},
		{8, `{"items": [{"sku": "b", "n": 4}]}`},
		{9, `{"items": []}`},
	} {
		lendCheck(t, handlers, Value{}, events[:c.events])
		rp := NewReplayer(handlers, Value{})
		for _, ev := range events[:c.events] {
			if err := rp.Apply(caseEvent(ev)); err != nil {
				t.Fatal(err)
			}
		}
		want, err := ParseJSON([]byte(c.want))
		if err != nil {
			t.Fatal(err)
		}
		if got := rp.State(); !Equal(got, want) {
			t.Errorf("after %d events: got %s, want %s", c.events, got, want)
		}
	}
}
