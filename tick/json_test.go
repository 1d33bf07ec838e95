package tick

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`null`, `null`},
		{` true `, `true`},
		{`-0`, `0`},
		{`1710000000`, `1710000000`},
		{`29.99`, `29.99`},
		{`1e3`, `1000`},
		{`1.5e-7`, `1.5e-7`},
		{`123456789012345678`, `123456789012345680`},
		{`"a\"b\\c\/d\n\u00e9\ud83d\ude00"`, `"a\"b\\c/d\né😀"`},
		{`"\ud800"`, "\"\ufffd\""},
		{`"\u0001"`, `"\u0001"`},
		{"\"a\xffb\"", "\"a\ufffdb\""},
		{`{"b": 1, "a": [1, {"c": []}], "e": {}}`, `{"b":1,"a":[1,{"c":[]}],"e":{}}`},
		{`{"a": 1, "b": 2, "a": 3}`, `{"a":3,"b":2}`},
	} {
		v, err := ParseJSON([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := v.String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
		var std any
		if err := json.Unmarshal([]byte(v.String()), &std); err != nil {
			t.Errorf("%s: output is not JSON: %v", tc.in, err)
		}
	}
}

// TestParser: documents parsed one after the other share the Parser's arenas
// without a Value of one seeing another's, also across a failed document and
// a document that outgrows the arenas; after Reset the arenas serve again, so
// that parsing takes only the copy of the text.
func TestParser(t *testing.T) {
	large := `[` + strings.Repeat(`{"a":[1,2],"b":{"c":3}},`, 3*arenaChunk) + `0]`
	docs := []string{
		`{"sku":"a-1","qty":2,"tags":["x","y"]}`,
		`{"actor":{"type":"user","id":"u1"},"ts":5}`,
		`{"broken":`,
		`[1,[2,[3]],{"k":[]}]`,
		large,
		`{"after":{"large":[true,null]}}`,
	}
	var ps Parser
	for round := range 2 {
		var got []Value
		var want []string
		for _, d := range docs {
			v, err := ps.Parse([]byte(d))
			w, werr := ParseJSON([]byte(d))
			if (err == nil) != (werr == nil) {
				t.Fatalf("round %d, %.40s: Parse gave %v, ParseJSON %v", round, d, err, werr)
			}
			if err == nil {
				got, want = append(got, v), append(want, w.String())
			}
		}
		for i, v := range got {
			if v.String() != want[i] {
				t.Errorf("round %d, document %d after the others: %.80s, want %.80s", round, i, v.String(), want[i])
			}
		}
		ps.Reset()
	}
	small := []byte(docs[0])
	if _, err := ps.Parse(small); err != nil {
		t.Fatal(err)
	}
	ps.Reset()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ps.Parse(small); err != nil {
			t.Fatal(err)
		}
		ps.Reset()
	})
	if allocs > 1 {
		t.Errorf("Parse and Reset of a document the arenas hold: %v allocations, want 1 (the text)", allocs)
	}
}

func TestParseJSONErrors(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := ParseJSON([]byte(ok)); err != nil {
		t.Errorf("depth %d: got %v, want accepted", MaxDepth, err)
	}
	for _, in := range []string{
		``, `{`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `01`, `1.`, `-`, `1e`, `"abc`, "\"a\x01\"",
		`"\x"`, `"\u12"`, `tru`, `nul`, `1 2`, `{"a":1}x`, `1e400`, `{1:2}`, deep,
	} {
		_, err := ParseJSON([]byte(in))
		if err == nil || !errors.Is(err, ErrJSON) {
			t.Errorf("%q: got %v, want ErrJSON", in, err)
		}
	}
	// A large object with a repeated key keeps parsing in linear time and
	// still keeps the last value.
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		b.WriteString(`"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `":1,`)
	}
	b.WriteString(`"ka":2}`)
	v, err := ParseJSON([]byte(b.String()))
	if err != nil || v.Get("ka").Num() != 2 {
		t.Errorf("large object: got %v %v, want ka=2", v.Get("ka"), err)
	}
}

func TestGoConversions(t *testing.T) {
	in := map[string]any{"b": []any{1.5, "x", true, nil}, "a": json.Number("7"), "c": map[string]any{}}
	v, err := FromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != `{"a":7,"b":[1.5,"x",true,null],"c":{}}` {
		t.Errorf("FromGo: got %s", got)
	}
	back, _ := json.Marshal(v.ToGo())
	if string(back) != `{"a":7,"b":[1.5,"x",true,null],"c":{}}` {
		t.Errorf("ToGo: got %s", back)
	}
	if _, err := FromGo(struct{}{}); !errors.Is(err, ErrType) {
		t.Errorf("FromGo(struct): got %v, want ErrType", err)
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `"1"`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`[1,2]`, `[2,1]`, false},
		{`null`, `false`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
	} {
		a, b := mustJSON(t, tc.a), mustJSON(t, tc.b)
		if got := Equal(a, b); got != tc.want {
			t.Errorf("Equal(%s, %s): got %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestParseEvent(t *testing.T) {
	ev, err := ParseEvent([]byte(`{"key": "order:o1", "type": "was_placed", "data": {"a": 1}, "metadata": {"timestamp": 5}, "stream_id": "1-0"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.AggregateType != "order" || ev.ID != "o1" || ev.Type != "was_placed" || ev.Data.Get("a").Num() != 1 {
		t.Errorf("got %+v", ev)
	}
	if ts, ok := ev.Timestamp(); !ok || ts != 5 {
		t.Errorf("timestamp: got %v %v", ts, ok)
	}
	for _, bad := range []string{`[]`, `{"key": "a:b"}`, `{`} {
		if _, err := ParseEvent([]byte(bad)); !errors.Is(err, ErrJSON) {
			t.Errorf("%s: got %v, want ErrJSON", bad, err)
		}
	}
}
