package fuzz

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/tick"
)

// tickSeedHandlers are handlers from the Tick page, covering every operation.
var tickSeedHandlers = []string{
	`[{"set": {"target": "", "value": "$.data"}}, {"set": {"target": "status", "value": "active"}}]`,
	`[{"merge": {"target": "profile", "value": "$.data"}}, {"append": {"target": "items", "value": {"$merge": [{"$": "$.data"}, {"at": {"$": "$.metadata.timestamp"}}]}}}]`,
	`[{"remove": {"target": "tags", "value": "$.data.tag"}}, {"remove": {"target": "items", "where": {"id": "$.data.id"}}}]`,
	`[{"increment": {"target": "n", "by": "$.data.n?"}}, {"decrement": {"target": "m", "value": 2}}]`,
	`[{"filter": {"target": "s", "keep": {"not": {"expired": {"timestamp": "$item.t", "maxAgeSeconds": 10, "now": "$.metadata.timestamp"}}}}}]`,
	`[{"map": {"target": "st", "as": "$s", "apply": [{"set": {"target": "r", "value": "$s.x?"}}]}}]`,
	`[{"update_where": {"target": "a", "match": {"id": "$.data.id"}, "merge": {"v": true}}}, {"upsert": {"target": "a", "match": {"id": "$.data.id"}, "value": "$.data"}}]`,
	`[{"append_unique": {"target": "m", "value": "$.data", "uniqueField": "id"}}, {"set_at": {"target": "p", "key": "$.data.k", "value": "$.data.v"}}]`,
	`[{"merge_at": {"target": "m", "key": "$.data.k", "value": {"r": "$.data.r"}}}, {"remove_at": {"target": "m", "key": "$.data.k"}}, {"increment_at": {"target": "c", "key": "$.data.k", "by": 1}}]`,
	`[{"if": {"and": [{"equals": ["@.s", "x"]}, {"some": {"in": "@.l", "match": {"gt": ["$item", 1]}}}]}, "then": [{"set": {"target": "a", "value": 1}}], "else": [{"set": {"target": "a", "value": "@"}}]}]`,
	`[{"let": {"name": "$f", "find": {"in": "a", "where": {"id": "$.data.id"}}}}, {"set": {"target": "f", "value": "$f.name?"}}]`,
}

var tickSeedStates = []string{`{}`, `null`, `{"a": [{"id": 1, "name": "x"}], "tags": ["a"], "m": {"k": {"r": 1}}, "n": 1, "l": [1, 2, 3], "s": "x"}`, `{"items": 5, "a": "s"}`}
var tickSeedData = []string{`{"id": 1, "tag": "a", "k": "k", "v": 2, "n": 3}`, `{}`, `[1]`, `{"k": 5, "id": null}`}

// FuzzTickHandler: a handler that compiles never panics when applied to any
// state and event, and what it returns is valid JSON.
func FuzzTickHandler(f *testing.F) {
	for i, h := range tickSeedHandlers {
		f.Add([]byte(h), []byte(tickSeedStates[i%len(tickSeedStates)]), []byte(tickSeedData[i%len(tickSeedData)]))
	}
	f.Fuzz(func(t *testing.T, handler, state, data []byte) {
		h, err := tick.CompileHandler(handler)
		if err != nil {
			return
		}
		st, err := tick.ParseJSON(state)
		if err != nil {
			st = tick.Value{}
		}
		d, err := tick.ParseJSON(data)
		if err != nil {
			d = tick.Null()
		}
		meta, _ := tick.ParseJSON([]byte(`{"timestamp": 1710000000, "actor": {"type": "user", "id": "u1"}}`))
		ev := &tick.Event{Key: "t:1", AggregateType: "t", ID: "1", Type: "e", Data: d, Metadata: meta}
		before := st.String()
		out, err := h.Apply(st, ev)
		if st.String() != before {
			t.Fatalf("Apply modified its input state")
		}
		if err == nil && !json.Valid(out.AppendJSON(nil)) {
			t.Fatalf("Apply produced invalid JSON: %s", out)
		}
		rp := tick.NewReplayer(map[string]*tick.Handler{"e": h}, st)
		if st.IsMissing() {
			_ = rp.Apply(ev)
			_ = rp.State()
			return
		}
		// The same events from the state as a snapshot stores it, read by
		// ParseState, give the same states.
		stored, err := tick.ParseState(st.AppendJSON(nil))
		if err != nil {
			t.Fatalf("ParseState of %s: %v", st, err)
		}
		rs := tick.NewReplayer(map[string]*tick.Handler{"e": h}, stored)
		for range 3 {
			errP, errS := rp.Apply(ev), rs.Apply(ev)
			if (errP == nil) != (errS == nil) {
				t.Fatalf("from the stored state: error %v, from the parsed one %v", errS, errP)
			}
		}
		if p, s := rp.State(), rs.State(); p.String() != s.String() {
			t.Fatalf("from the stored state %s, from the parsed one %s", s, p)
		}
	})
}

// FuzzTickParseJSON: the parser never panics, accepts only JSON, and what it
// writes parses back to the same value.
func FuzzTickParseJSON(f *testing.F) {
	for _, s := range append(append([]string{`"\ud83d\ude00"`, `1e-7`, `[[[]]]`, `{"a":1,"a":2}`}, tickSeedStates...), tickSeedHandlers...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := tick.ParseJSON(raw)
		if err != nil {
			var std any
			if json.Unmarshal(raw, &std) == nil && canonical.Depth(raw) <= tick.MaxDepth {
				t.Fatalf("rejected valid JSON %q: %v", raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		// Writing is a fixed point: what was written parses back and writes
		// the same bytes (invalid UTF-8 has become U+FFFD on the first write).
		out := v.AppendJSON(nil)
		w, err := tick.ParseJSON(out)
		if err != nil || string(w.AppendJSON(nil)) != string(out) {
			t.Fatalf("round trip: %q -> %s -> %v", raw, out, err)
		}
		if utf8.Valid(raw) && !tick.Equal(v, w) {
			t.Fatalf("round trip changed the value: %q -> %s", raw, out)
		}
		// What was written is what snapshots store: ParseState reads it as
		// the same value and writes it back unchanged.
		s, err := tick.ParseState(out)
		if err != nil || string(s.AppendJSON(nil)) != string(out) || !tick.Equal(s, w) {
			t.Fatalf("ParseState: %s -> %s, %v", out, s, err)
		}
	})
}

// FuzzTickPath: any string either fails to parse or resolves without panic.
func FuzzTickPath(f *testing.F) {
	for _, s := range []string{"$", "@", "$.data.items[-1].name?", "$.a.$entries", "$item.tags[0]", "$prev.data.x", "$context.s.x", "$..a", "$.a[*].b", "$.a[99999999]"} {
		f.Add(s)
	}
	doc, _ := tick.ParseJSON([]byte(`{"data": {"items": [{"name": "a", "tags": ["x"]}], "a": {"b": 1}}, "a": [{"b": 2}, 3]}`))
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (tick.Path, error){tick.ParsePath, tick.ParseSourcePath} {
			p, err := parse(s)
			if err != nil {
				continue
			}
			_ = p.ResolveIn(doc)
			sc := &tick.Scope{Event: &tick.Event{Data: doc.Get("data")}, State: doc, Prev: doc, Context: doc, Error: doc, Extra: doc}
			sc.Bind("$item", doc)
			_ = p.Resolve(sc)
		}
	})
}

// FuzzTickTemplate: templates and predicates that compile never panic when
// evaluated.
func FuzzTickTemplate(f *testing.F) {
	for _, s := range []string{
		`{"message": {"concat": ["Order ", "$.key", 1, true, null]}}`,
		`{"n": {"coalesce": ["$.data.a", "$.data.b", "x"]}, "o": "$.data.c?"}`,
		`{"merge": ["@.defaults", {"by": "$.metadata.actor.id"}, {"$merge": ["$item", {"$": "$prev.data"}]}]}`,
		`{"and": [{"in": ["$.data.a", [1, 2]]}, {"subset_of": {"items": "@.r", "array": "$.data.l"}}, {"exists": "$error.step"}]}`,
		`{"every": {"in": "$.data.l", "as": "$x", "match": {"lte": ["$x", "$context.s.max"]}}}`,
	} {
		f.Add([]byte(s), []byte(`{"a": null, "b": 2, "l": [1, 2], "c": {"d": 1}}`))
	}
	f.Fuzz(func(t *testing.T, tmpl, data []byte) {
		d, err := tick.ParseJSON(data)
		if err != nil {
			d = tick.Value{}
		}
		sc := &tick.Scope{Event: &tick.Event{Key: "o:1", Data: d, Metadata: d}, State: d, Prev: d, Context: d, Error: d}
		sc.Bind("$item", d)
		opts := tick.TemplateOptions{Prev: true, Context: true, Error: true, Item: true}
		if tp, err := tick.CompileTemplate(tmpl, opts); err == nil {
			if v, err := tp.Eval(sc); err == nil && !json.Valid(v.AppendJSON(nil)) {
				t.Fatalf("template produced invalid JSON: %s", v)
			}
		}
		if p, err := tick.CompilePredicate(tmpl); err == nil {
			_, _ = p.Eval(sc)
		}
	})
}

// FuzzTickReplayEvent: a replay, which decodes events keeping data and
// metadata as validated text, accepts exactly what ParseEvent accepts and
// stores the same data and metadata.
func FuzzTickReplayEvent(f *testing.F) {
	for _, d := range append(append([]string{`"s"`, `{"a":1,"a":2}`, `{"\u0061":[{"b":"\n"}]}`, `{"a":1e999}`, `{"a":"\x"}`}, tickSeedData...), tickSeedStates...) {
		f.Add([]byte(`{"key":"k:1","type":"t","data":` + d + `,"metadata":{"timestamp":1,"timestamp":2}}`))
	}
	h, err := tick.CompileHandler([]byte(`[{"set": {"target": "d", "value": "$.data?"}}, {"set": {"target": "m", "value": "$.metadata?"}}]`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := tick.ParseEvent(raw)
		typ := "t"
		if werr == nil {
			typ = want.Type
		}
		rp := tick.NewReplayer(map[string]*tick.Handler{typ: h}, tick.Value{})
		// ApplyJSON reads raw only during the call: the state must not change when the caller
		// reuses the buffer, as a replay does for every event.
		buf := append([]byte(nil), raw...)
		err := rp.ApplyJSON(buf)
		clear(buf)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: replay error %v, ParseEvent error %v", raw, err, werr)
		}
		if err != nil {
			return
		}
		state := rp.State()
		for _, pair := range [][2]tick.Value{{state.Get("d"), want.Data}, {state.Get("m"), want.Metadata}} {
			got, w := pair[0], pair[1]
			if got.String() != w.String() || !tick.Equal(got, w) {
				t.Fatalf("%q: got %s, want %s", raw, got, w)
			}
			for _, m := range w.Members() {
				if g := got.Get(m.Key); !tick.Equal(g, m.Value) {
					t.Fatalf("%q: %s = %s, want %s", raw, m.Key, g, m.Value)
				}
			}
		}
	})
}
