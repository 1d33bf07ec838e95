package tick

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// stateDocs are states as a snapshot stores them: each is normalized by
// ParseJSON and AppendJSON before ParseState reads it.
var stateDocs = []string{
	`{}`,
	`[]`,
	`"text"`,
	`{"items":[],"tags":[],"m":{}}`,
	`{"items":[{"id":1,"n":1.5},{"id":2,"n":-0.25e-9}],"tags":["x","y"],"m":{"k":{"v":[1,[2,{}]]}},"count":2}`,
	`{"s":"\u00e9\n\"\\\u0001","items":[{"id":"\u0041","note":"tab\there"}],"deep":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
	`[{"id":1},[2,3],"s",null,true,1e21]`,
}

// TestParseStateWritesBack: a state read by ParseState is the same value
// ParseJSON reads, and is written back as the same text.
func TestParseStateWritesBack(t *testing.T) {
	for _, doc := range stateDocs {
		text := mustJSON(t, doc).String()
		v, err := ParseState([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := v.String(); got != text {
			t.Errorf("written back as %s, want %s", got, text)
		}
		if !Equal(v, mustJSON(t, text)) {
			t.Errorf("%s: not equal to what ParseJSON reads", text)
		}
		// The members and items, once something walks into them, are the
		// same too, and the text is still what is written.
		for _, m := range v.Members() {
			if !Equal(m.Value, mustJSON(t, text).Get(m.Key)) || m.Value.Len() != mustJSON(t, text).Get(m.Key).Len() {
				t.Errorf("%s: member %q differs", text, m.Key)
			}
		}
		if got := v.String(); got != text {
			t.Errorf("after walking: written back as %s, want %s", got, text)
		}
	}
}

// TestParseStateRejects: the text below the top level is validated like
// ParseJSON's, so a damaged snapshot is an error, never a lazy node that
// fails later.
func TestParseStateRejects(t *testing.T) {
	for _, doc := range []string{
		`{"items":[1,2}`,
		`{"items":[{"a":01}]}`,
		`{"items":["\x"]}`,
		`{"items":[1,]}`,
		`{"m":{"a" 1}}`,
		`{"items":[]} x`,
		`{"deep":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`,
	} {
		if _, err := ParseState([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", doc)
		} else if _, err := ParseJSON([]byte(doc)); err == nil {
			t.Errorf("%s: ParseJSON accepts it but ParseState does not", doc)
		}
	}
}

// verbatimHandlers exercise every operation on the arrays a state read by
// ParseState holds, with appends (which extend a tail) in between.
var verbatimHandlers = map[string]string{
	"add":     `[{"append": {"target": "items", "value": "$.data"}}]`,
	"add2":    `[{"append": {"target": "items", "value": "$.data"}}, {"append": {"target": "items", "value": {"id": "$.data.id", "twice": true}}}]`,
	"tag":     `[{"append": {"target": "tags", "value": "$.data.tag"}}]`,
	"newlist": `[{"append": {"target": "fresh", "value": "$.data.id"}}]`,
	"nested":  `[{"append": {"target": "m.k.v", "value": "$.data.id"}}]`,
	"upsert":  `[{"upsert": {"target": "items", "match": {"id": "$.data.id"}, "value": {"id": "$.data.id", "up": true}}}]`,
	"rmwhere": `[{"remove": {"target": "items", "where": {"id": "$.data.id"}}}]`,
	"rmvalue": `[{"remove": {"target": "tags", "value": "$.data.tag"}}]`,
	"filter":  `[{"filter": {"target": "items", "keep": {"not_equals": ["$item.id", "$.data.id"]}}}]`,
	"map":     `[{"map": {"target": "items", "apply": [{"set": {"target": "seen", "value": "$.data.id"}}]}}]`,
	"update":  `[{"update_where": {"target": "items", "match": {"id": "$.data.id"}, "merge": {"hit": true}}}]`,
	"unique":  `[{"append_unique": {"target": "tags", "value": "$.data.tag"}}]`,
	"copy":    `[{"set": {"target": "copy", "value": "@.items"}}, {"append": {"target": "items", "value": "$.data"}}]`,
	"last":    `[{"append": {"target": "items", "value": "$.data"}}, {"set": {"target": "last", "value": "@.items[-1]"}}, {"set": {"target": "first", "value": "@.items[0]"}}]`,
	"before":  `[{"append": {"target": "items", "value": "$.data"}}, {"set": {"target": "prev", "value": "$.state.items"}}]`,
	"if":      `[{"if": {"some": {"in": "@.items", "match": {"equals": ["$item.id", "$.data.id"]}}}, "then": [{"increment": {"target": "hits"}}], "else": [{"append": {"target": "items", "value": "$.data"}}]}]`,
	"replace": `[{"set": {"target": "items", "value": ["$.data"]}}]`,
	"addup":   `[{"append": {"target": "items", "value": "$.data"}}, {"upsert": {"target": "items", "match": {"id": "$.data.id"}, "value": {"id": "$.data.id", "up": 2}}}]`,
	"addrm":   `[{"append": {"target": "items", "value": "$.data"}}, {"remove": {"target": "items", "where": {"id": 0}}}]`,
	"addmap":  `[{"append": {"target": "tags", "value": "$.data.tag"}}, {"map": {"target": "items", "apply": [{"set": {"target": "n", "value": "$.data.id"}}]}}]`,
	"setat":   `[{"set_at": {"target": "m", "key": "$.data.tag", "value": "$.data.id"}}]`,
}

// TestVerbatimMatchesParsed replays random sequences of those handlers from
// states read by ParseState and by ParseJSON: after every event the two
// states are equal and written alike, states handed out earlier never
// change, and a one-off Apply from a handed-out state (another session,
// as a write from a cached state is) matches too.
func TestVerbatimMatchesParsed(t *testing.T) {
	handlers := map[string]*Handler{}
	var types []string
	for name, h := range verbatimHandlers {
		handlers[name] = mustHandler(t, h)
		types = append(types, name)
	}
	// Map order is random; the sequences must not be.
	for i := range types {
		for j := i + 1; j < len(types); j++ {
			if types[j] < types[i] {
				types[i], types[j] = types[j], types[i]
			}
		}
	}
	for seed := range uint64(60) {
		doc := stateDocs[4+seed%2]
		text := mustJSON(t, doc).String()
		lazy, err := ParseState([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		verbatim, eager := NewReplayer(handlers, lazy), NewReplayer(handlers, mustJSON(t, text))
		rng := rand.New(rand.NewPCG(seed, 7))
		type held struct {
			v    Value
			text string
		}
		var kept []held
		for i := range 60 {
			typ := types[rng.IntN(len(types))]
			if rng.IntN(3) > 0 {
				typ = "add" // mostly appends, so that tails grow
			}
			ev := fmt.Sprintf(`{"type":%q,"data":{"id":%d,"tag":"t%d"},"metadata":{"timestamp":%d}}`, typ, rng.IntN(6), rng.IntN(4), 100+i)
			errV, errE := verbatim.ApplyJSON([]byte(ev)), eager.ApplyJSON([]byte(ev))
			if (errV == nil) != (errE == nil) {
				t.Fatalf("seed %d event %d %s: errors differ: %v and %v", seed, i, ev, errV, errE)
			}
			if rng.IntN(5) > 0 {
				// State() freezes: most events must find the tails the
				// events before them left mutable.
				continue
			}
			got, want := verbatim.State(), eager.State()
			if got.String() != want.String() || !Equal(got, want) {
				t.Fatalf("seed %d event %d %s:\n got %s\nwant %s", seed, i, ev, got, want)
			}
			if rng.IntN(4) == 0 {
				kept = append(kept, held{got, got.String()})
				other := types[rng.IntN(len(types))]
				oev := &Event{Type: other, Data: mustJSON(t, `{"id":3,"tag":"t1"}`), Metadata: mustJSON(t, `{"timestamp":1000}`)}
				a, errA := handlers[other].Apply(got, oev)
				b, errB := handlers[other].Apply(want, oev)
				if (errA == nil) != (errB == nil) || (errA == nil && a.String() != b.String()) {
					t.Fatalf("seed %d: Apply %s from a held state: got %s (%v), want %s (%v)", seed, other, a, errA, b, errB)
				}
			}
		}
		if got, want := verbatim.State(), eager.State(); got.String() != want.String() {
			t.Fatalf("seed %d at the end:\n got %s\nwant %s", seed, got, want)
		}
		for _, h := range kept {
			if got := h.v.String(); got != h.text {
				t.Fatalf("seed %d: a state handed out changed:\n got %s\nwant %s", seed, got, h.text)
			}
		}
		if got := lazy.String(); got != text {
			t.Fatalf("seed %d: the state read changed: %s", seed, got)
		}
	}
}

// TestVerbatimTailShared: a state with a tail, shared by goroutines (as
// cached states are), is read, written and appended to from all of them;
// run with -race.
func TestVerbatimTailShared(t *testing.T) {
	h := mustHandler(t, `[{"append": {"target": "items", "value": "$.data.v"}}]`)
	base, err := ParseState([]byte(`{"items":[0,1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	shared, err := h.Apply(base, &Event{Data: mustJSON(t, `{"v":3}`), Metadata: mustJSON(t, `{"timestamp":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := shared.String()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n := shared.Get("items").Len(); n != 4 {
				errs <- fmt.Sprintf("len %d, want 4", n)
			}
			if got := shared.String(); got != want {
				errs <- "shared state written as " + got
			}
			s := shared
			for i := range 20 {
				var err error
				if s, err = h.Apply(s, &Event{Data: Object(Member{Key: "v", Value: Number(float64(g*100 + i))}), Metadata: mustJSON(t, `{"timestamp":2}`)}); err != nil {
					errs <- err.Error()
					return
				}
			}
			if n := s.Get("items").Len(); n != 24 {
				errs <- fmt.Sprintf("after appends: len %d, want 24", n)
			}
			if last := s.Get("items").Index(-1).Num(); last != float64(g*100+19) {
				errs <- fmt.Sprintf("last item %v, want %d", last, g*100+19)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := shared.String(); got != want {
		t.Errorf("shared state changed: got %s, want %s", got, want)
	}
}

// TestVerbatimAppendParsesNothing: appending to an array of a state read by
// ParseState, and writing the state out, leaves the array's text unparsed;
// this is what makes reading a long stream from its snapshot cheap.
func TestVerbatimAppendParsesNothing(t *testing.T) {
	h := mustHandler(t, `[{"append": {"target": "items", "value": "$.data"}}, {"increment": {"target": "count"}}]`)
	base, err := ParseState([]byte(`{"items":[{"id":1},{"id":2}],"count":2}`))
	if err != nil {
		t.Fatal(err)
	}
	rp := NewReplayer(map[string]*Handler{"add": h}, base)
	for i := range 3 {
		if err := rp.ApplyJSON(fmt.Appendf(nil, `{"type":"add","data":{"id":%d},"metadata":{"timestamp":5}}`, 3+i)); err != nil {
			t.Fatal(err)
		}
	}
	got := rp.State()
	if s := got.String(); s != `{"items":[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5}],"count":5,"created_at":5,"updated_at":5}` {
		t.Errorf("got %s", s)
	}
	items := got.Get("items").n
	if items.lz == nil || items.lz.full.Load() != nil || len(items.lz.tail) != 3 {
		t.Errorf("the items were parsed, or the appends are not a tail of three")
	}
	if base.Get("items").n.lz.full.Load() != nil {
		t.Errorf("the text read was parsed")
	}
}

// TestVerbatimAppendToSpacedText: text that AppendJSON did not write (with
// spaces) is written back as it is, and appending to it still gives JSON.
func TestVerbatimAppendToSpacedText(t *testing.T) {
	h := mustHandler(t, `[{"append": {"target": "a", "value": 1}}, {"append": {"target": "b", "value": 2}}]`)
	base, err := ParseState([]byte(`{"a":[ ],"b":[ 1 ]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Apply(base, &Event{Metadata: mustJSON(t, `{"timestamp":5}`)})
	if err != nil {
		t.Fatal(err)
	}
	out := got.String()
	back, err := ParseJSON([]byte(out))
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if want := mustJSON(t, `{"a":[1],"b":[1,2],"created_at":5,"updated_at":5}`); !Equal(back, want) {
		t.Errorf("got %s, want %s", out, want)
	}
}
