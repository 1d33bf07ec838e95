package storage

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

type docCase struct {
	line     int
	cmd      string
	expected string
}

func readDocCases(t *testing.T, path string) []docCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []docCase
	var cur *docCase
	inExpected := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "":
			cur, inExpected = nil, false
		case line == "----":
			inExpected = true
		case inExpected:
			cur.expected = strings.TrimSpace(cur.expected + "\n" + line)
		default:
			cases = append(cases, docCase{line: n, cmd: line})
			cur = &cases[len(cases)-1]
		}
	}
	return cases
}

func parseKey(s string) StreamKey {
	typ, id, _ := strings.Cut(s, ":")
	return StreamKey{Type: typ, ID: id}
}

// TestDocsExamples runs testdata/docs_examples.txt, the documentation's examples of ids, OCC,
// cursors and listing.
func TestDocsExamples(t *testing.T) {
	clock := newFakeClock()
	opts := testOptions()
	opts.Clock = clock.Now
	s, _ := openChecked(t, opts)
	cases := readDocCases(t, "testdata/docs_examples.txt")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		args := map[string]string{}
		for _, a := range f[1:] {
			if k, v, ok := strings.Cut(a, "="); ok {
				args[k] = v
			}
		}
		var got string
		switch f[0] {
		case "clock":
			ms, _ := strconv.ParseInt(f[1], 10, 64)
			clock.Set(time.UnixMilli(ms))
			continue
		case "commit":
			kind, n, _ := strings.Cut(f[2], "=")
			length, _ := strconv.ParseUint(n, 10, 64)
			ex := Expect{Kind: map[string]ExpectKind{"any": Any, "exactly": Exactly, "skip": Skip}[kind], Length: length}
			var evs []NewEvent
			for _, typ := range f[3:] {
				evs = append(evs, ev(typ, map[string]any{}))
			}
			res, err := appendOne(s, parseKey(f[1]), ex, evs...)
			var ce *ConflictError
			switch {
			case errors.As(err, &ce):
				got = fmt.Sprintf("conflict expected=%d actual=%d", ce.Expected, ce.Actual)
			case err != nil:
				got = "error " + err.Error()
			default:
				var ids []string
				for _, id := range res.StreamIDs {
					ids = append(ids, id.String())
				}
				got = fmt.Sprintf("stream_ids %s length %d", strings.Join(ids, " "), res.Lengths[0])
			}
		case "length":
			got = fmt.Sprint(mustLength(t, s, parseKey(f[1])))
		case "events":
			var after StreamID
			if a, ok := args["after"]; ok {
				var err error
				if after, err = ParseStreamID(a); err != nil {
					t.Fatal(err)
				}
			}
			count, _ := strconv.Atoi(args["count"])
			evs, err := s.Events(parseKey(f[1]), after, count)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range evs {
				ids = append(ids, e.StreamID.String())
			}
			got = strings.Join(ids, " ")
		case "list":
			limit, _ := strconv.Atoi(args["limit"])
			ids, err := s.List(f[1], args["cursor"], limit)
			if err != nil {
				t.Fatal(err)
			}
			got = strings.Join(ids, " ")
		default:
			t.Fatalf("line %d: unknown command %q", c.line, f[0])
		}
		if got != c.expected {
			t.Errorf("line %d %q: got %q, want %q", c.line, c.cmd, got, c.expected)
		}
	}
}
