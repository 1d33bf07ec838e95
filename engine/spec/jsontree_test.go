package spec

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// toAny converts a node to the value encoding/json would decode, numbers as float64.
func toAny(n *node) any {
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.boolean
	case kindNumber:
		f, _ := strconv.ParseFloat(n.str, 64)
		return f
	case kindString:
		return n.str
	case kindArray:
		out := []any{}
		for _, e := range n.elems {
			out = append(out, toAny(e))
		}
		return out
	default:
		out := map[string]any{}
		for _, m := range n.members {
			out[m.key] = toAny(m.val)
		}
		return out
	}
}

func TestParseTreeValues(t *testing.T) {
	for _, text := range []string{
		`{}`, `[]`, `null`, ` true `, `false`, `0`, `-0.5e+3`, `1E2`, `"plain"`,
		`"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`, `"ünïcödé ☕"`,
		`{"a": [1, {"b": null}], "c": "d"}`, "\n\t{\r\n\"k\" : [ ] }\n",
	} {
		n, dups, serr := parseTree(text)
		if serr != nil || len(dups) != 0 {
			t.Errorf("parseTree(%q): error %+v, duplicates %v", text, serr, dups)
			continue
		}
		var want any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Errorf("parseTree(%q) = %#v, want %#v", text, got, want)
		}
		if text[n.start:n.end] == "" {
			t.Errorf("parseTree(%q): empty span", text)
		}
	}
}

func TestParseTreeErrors(t *testing.T) {
	cases := []struct {
		text string
		off  int
	}{
		{``, 0},
		{`{"a": 1,}`, 8},
		{`[1 2]`, 3},
		{`01`, 0},
		{`1.`, 2},
		{`1e`, 2},
		{`"abc`, 4},
		{`"a\x"`, 3},
		{"\"a\x01\"", 2},
		{"\"\xff\"", 1},
		{`{} x`, 3},
		{`{"a" 1}`, 5},
		{`{1: 2}`, 1},
		{`tru`, 0},
		{`"\u12"`, 3},
	}
	for _, c := range cases {
		_, _, serr := parseTree(c.text)
		if serr == nil {
			t.Errorf("parseTree(%q): no error, want one at offset %d", c.text, c.off)
			continue
		}
		if serr.off != c.off {
			t.Errorf("parseTree(%q): error %q at offset %d, want offset %d", c.text, serr.msg, serr.off, c.off)
		}
	}
}

func TestParseTreeDuplicates(t *testing.T) {
	_, dups, serr := parseTree(`{"a": {"b": 1, "b": 2}, "a~/": [{"x": 1, "x": 1}], "a": 3}`)
	if serr != nil {
		t.Fatal(serr.msg)
	}
	want := []duplicate{{ptr: "/a/b", off: 15, key: "b"}, {ptr: "/a~0~1/0/x", off: 41, key: "x"}, {ptr: "/a", off: 51, key: "a"}}
	if !reflect.DeepEqual(dups, want) {
		t.Errorf("duplicates = %+v, want %+v", dups, want)
	}
}

func TestLocate(t *testing.T) {
	text := "{\"a\": {\"b~/c\": [10, 20]}}"
	n, _, _ := parseTree(text)
	cases := []struct {
		rel, ptr string
		off      int
	}{
		{"", "/base", 0},
		{"/a", "/base/a", 1},
		{"/a/b~0~1c/1", "/base/a/b~0~1c/1", 20},
		{"/a/missing/x", "/base/a/missing/x", 1},
		{"/a/b~0~1c/9", "/base/a/b~0~1c/9", 7},
	}
	for _, c := range cases {
		ptr, off := locate(n, "/base", c.rel)
		if ptr != c.ptr || off != c.off {
			t.Errorf("locate(%q) = %q, %d; want %q, %d", c.rel, ptr, off, c.ptr, c.off)
		}
	}
}
