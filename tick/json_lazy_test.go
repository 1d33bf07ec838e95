package tick

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lazyCases are events whose data and metadata stay text after decoding:
// each must decode exactly as parsing the whole document does.
var lazyCases = []struct{ name, raw string }{
	{"plain", `{"key":"a:1","type":"t","data":{"id":"x","n":1.5,"tags":["a","b"]},"metadata":{"timestamp":17,"actor":{"id":"u"}}}`},
	{"spaces", " { \"type\" : \"t\" ,\n\"data\" :\t{ \"a\" : [ 1 , { \"b\" : null } ] , \"c\" : true } } "},
	{"repeated keys", `{"type":"t","data":{"id":1,"x":2,"id":3},"metadata":{"timestamp":1,"timestamp":2}}`},
	{"repeated data", `{"type":"t","data":{"a":1},"data":{"b":2}}`},
	{"escaped key", `{"type":"t","data":{"\u0069d":"e","i\"d":"q","id2":"\u00e9\n"}}`},
	{"escaped type", `{"type":"\u0074","data":[]}`},
	{"array data", `{"type":"t","data":[{"id":1},[2],"s",-0.5e3]}`},
	{"scalar data", `{"type":"t","data":"text","metadata":null}`},
	{"empty", `{"type":"t","data":{},"metadata":[]}`},
	{"other members", `{"type":"t","extra":{"deep":[1,2,{"x":"y"}]},"key":5,"data":{"a":1}}`},
	{"deep", `{"type":"t","data":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`},
	{"too deep", `{"type":"t","data":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`},
	{"too deep elsewhere", `{"type":"t","x":` + strings.Repeat("{\"a\":", MaxDepth) + "1" + strings.Repeat("}", MaxDepth) + `}`},
	{"bad escape", `{"type":"t","data":{"a":"\x"}}`},
	{"bad unicode escape", `{"type":"t","data":{"a":"\u12g4"}}`},
	{"control character", "{\"type\":\"t\",\"data\":{\"a\":\"\x01\"}}"},
	{"bad number", `{"type":"t","data":{"a":01}}`},
	{"bad fraction", `{"type":"t","data":{"a":1.}}`},
	{"out of range", `{"type":"t","data":{"a":1e999}}`},
	{"long number", `{"type":"t","data":{"a":` + strings.Repeat("9", 400) + `}}`},
	{"bad literal", `{"type":"t","data":{"a":tru}}`},
	{"unterminated", `{"type":"t","data":{"a":"x`},
	{"missing colon", `{"type":"t","data":{"a" 1}}`},
	{"trailing comma", `{"type":"t","data":{"a":1,}}`},
	{"unclosed array", `{"type":"t","data":[1,2}`},
	{"trailing data", `{"type":"t","data":{}} x`},
	{"not an object", `["type"]`},
	{"no type", `{"data":{}}`},
	{"type not a string", `{"type":"t","type":1}`},
}

// TestLazyEventMatchesParseJSON: a replay's decoding, which keeps data and
// metadata as text, accepts and gives what parsing the whole event does.
func TestLazyEventMatchesParseJSON(t *testing.T) {
	for _, tc := range lazyCases {
		t.Run(tc.name, func(t *testing.T) {
			got := new(Event)
			var p parser
			gotErr := p.parseLazyEvent(tc.raw, got)
			var want Event
			v, wantErr := ParseJSON([]byte(tc.raw))
			if wantErr == nil {
				wantErr = eventFromValue(v, &want)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("ParseEvent error %v, ParseJSON error %v", gotErr, wantErr)
			}
			if gotErr != nil {
				return
			}
			if got.Key != want.Key || got.Type != want.Type || got.ID != want.ID || got.AggregateType != want.AggregateType {
				t.Fatalf("got %+v, want %+v", *got, want)
			}
			for _, pair := range [][2]Value{{got.Data, want.Data}, {got.Metadata, want.Metadata}} {
				lazy, full := pair[0], pair[1]
				if w, g := full.String(), lazy.String(); g != w {
					t.Fatalf("got %s, want %s", g, w)
				}
				if !Equal(lazy, full) || !Equal(full, lazy) {
					t.Fatalf("%s: lazy and parsed values differ", full)
				}
				for _, m := range full.Members() {
					if g := lazy.Get(m.Key); !Equal(g, m.Value) {
						t.Fatalf("Get(%q) = %s, want %s", m.Key, g, m.Value)
					}
				}
				if g := lazy.Get("absent"); !g.IsMissing() {
					t.Fatalf("Get(absent) = %s, want missing", g)
				}
			}
		})
	}
}

// TestLazyReads: lookups in a lazy object, before and after something
// parsed it, give the same answers.
func TestLazyReads(t *testing.T) {
	ev := new(Event)
	var lp parser
	if err := lp.parseLazyEvent(`{"type":"t","data":{"id":"a","n":{"m":[1,{"k":"v"}]},"id":"b"}}`, ev); err != nil {
		t.Fatal(err)
	}
	p, err := ParsePath("$.data.n.m[1].k")
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"unparsed", "parsed"} {
		if got := ev.Data.Get("id").Str(); got != "b" {
			t.Fatalf("%s: Get(id) = %q, want \"b\"", when, got)
		}
		if got := p.Resolve(&Scope{Event: ev}).Str(); got != "v" {
			t.Fatalf("%s: %s = %q, want \"v\"", when, p, got)
		}
		if got := ev.Data.Len(); got != 2 {
			t.Fatalf("%s: Len = %d, want 2", when, got)
		}
	}
}

// TestLazyShared: goroutines reading one frozen state made of event text
// all see the same members (run with -race).
func TestLazyShared(t *testing.T) {
	hs := compileAll(t, map[string]string{"e": `[{"append": {"target": "xs", "value": "$.data"}}]`})
	rp := NewReplayer(hs, Value{})
	for range 3 {
		if err := rp.ApplyJSON([]byte(`{"type":"e","data":{"a":1,"b":[true,null]},"metadata":{"timestamp":5}}`)); err != nil {
			t.Fatal(err)
		}
	}
	state := rp.State()
	const want = `{"xs":[{"a":1,"b":[true,null]},{"a":1,"b":[true,null]},{"a":1,"b":[true,null]}],"created_at":5,"updated_at":5}`
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, it := range state.Get("xs").Items() {
				if len(it.Members()) != 2 || it.Get("b").Len() != 2 {
					t.Errorf("item %s: want 2 members and b of 2 items", it)
				}
			}
			if got := state.String(); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	wg.Wait()
}

// TestReplayerTextBlocks: events decoded into shared text blocks keep their
// values after the caller reuses its buffer and after many blocks.
func TestReplayerTextBlocks(t *testing.T) {
	hs := compileAll(t, map[string]string{"e": `[{"append": {"target": "xs", "value": "$.data.s"}}]`})
	rp := NewReplayer(hs, Value{})
	buf := make([]byte, 0, 64)
	const n = 2 * textChunk / 40
	for i := range n {
		buf = append(buf[:0], `{"type":"e","data":{"s":"v`...)
		buf = append(buf, byte('a'+i%26))
		buf = append(buf, `"}}`...)
		if err := rp.ApplyJSON(buf); err != nil {
			t.Fatal(err)
		}
	}
	xs := rp.State().Get("xs")
	if xs.Len() != n {
		t.Fatalf("got %d items, want %d", xs.Len(), n)
	}
	for i, it := range xs.Items() {
		if want := "v" + string(rune('a'+i%26)); it.Str() != want {
			t.Fatalf("item %d = %q, want %q", i, it.Str(), want)
		}
	}
}

// TestMergeLazy: merging event data that is still text gives what merging
// the parsed data gives, repeated keys included.
func TestMergeLazy(t *testing.T) {
	hs := compileAll(t, map[string]string{"e": `[{"merge": {"target": "p", "value": "$.data"}}]`})
	rp := NewReplayer(hs, Value{})
	for _, raw := range []string{
		`{"type":"e","data":{"a":1,"b":{"c":2}}}`,
		`{"type":"e","data":{"b":3,"d":[1],"b":4,"\u0061":"x"}}`,
	} {
		if err := rp.ApplyJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rp.State().String(), `{"p":{"a":"x","b":4,"d":[1]}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestRawMemberFirstKey: the shortcut for a first key never matches a key
// that only looks like the start of the text.
func TestRawMemberFirstKey(t *testing.T) {
	const obj = `{"a":1,"b":2}`
	for _, tc := range []struct{ key, want string }{
		{"a", "1"}, {"b", "2"}, {`a":1,"b`, ""}, {`a"`, ""}, {"", ""},
	} {
		if got, _ := rawMember(obj, tc.key, true); got != tc.want {
			t.Errorf("rawMember(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// TestRawNumber: numbers read from text, eight digits at a time when there
// are that many, are what strconv reads.
func TestRawNumber(t *testing.T) {
	for _, s := range []string{"0", "-7", "12345678", "00000009", "1710000000", "-1710000000123",
		"999999999999999", "9999999999999999", "12345678.5", "12345678e3", "1234.5678", "-0.000000001"} {
		want, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := rawNumber(s); got.kind != KindNumber || got.num != want {
			t.Errorf("rawNumber(%s) = %v, want %v", s, got.num, want)
		}
	}
	for i := 0; i < 1e8; i += 7919 {
		s := fmt.Sprintf("%08d", i)
		if got := rawNumber(s); got.num != float64(i) {
			t.Fatalf("rawNumber(%s) = %v", s, got.num)
		}
	}
}
