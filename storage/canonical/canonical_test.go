package canonical

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
)

type fileCase struct {
	name, input, want string
}

func readCases(t *testing.T, path string) []fileCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []fileCase
	var cur *fileCase
	var input []string
	inInput := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#") && cur == nil:
		case strings.HasPrefix(line, "case "):
			cases = append(cases, fileCase{name: strings.TrimPrefix(line, "case ")})
			cur = &cases[len(cases)-1]
			input, inInput = nil, true
		case cur == nil || line == "":
		case line == "----":
			cur.input = strings.Join(input, "\n")
			inInput = false
		case inInput:
			input = append(input, line)
		default:
			cur.want = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

var errorKinds = map[string]error{
	"invalid JSON":         ErrSyntax,
	"duplicate object key": ErrDuplicateKey,
	"invalid string":       ErrInvalidString,
	"nesting too deep":     ErrTooDeep,
}

func TestCanonicalizeFile(t *testing.T) {
	cases := readCases(t, "testdata/canonicalize.txt")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(c.input))
			if kind, ok := strings.CutPrefix(c.want, "error: "); ok {
				if !errors.Is(err, errorKinds[kind]) {
					t.Fatalf("%s: got %q, %v; want error %q", c.name, got, err, kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: got error %v, want %s", c.name, err, c.want)
			}
			if string(got) != c.want {
				t.Fatalf("%s: got %s, want %s", c.name, got, c.want)
			}
			again, err := Canonicalize(got)
			if err != nil || string(again) != string(got) {
				t.Fatalf("%s: not idempotent: got %s, %v", c.name, again, err)
			}
		})
	}
}

// TestCanonicalizeConcurrently runs the file's cases from several goroutines at once, each in its
// own order, so that parsers taken from the pool after a failure, after a deeper or larger
// document, or by another goroutine must give the same answers as fresh ones.
func TestCanonicalizeConcurrently(t *testing.T) {
	cases := readCases(t, "testdata/canonicalize.txt")
	want := make([]string, len(cases))
	for i, c := range cases {
		got, err := Canonicalize([]byte(c.input))
		if err != nil {
			want[i] = "error: " + err.Error()
		} else {
			want[i] = string(got)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			dst := []byte("prefix")
			for range 20 {
				for _, i := range rng.Perm(len(cases)) {
					out, err := Append(dst, []byte(cases[i].input))
					got := string(out[len(dst):])
					if err != nil {
						got = "error: " + err.Error()
						if len(out) != len(dst) {
							t.Errorf("%s: a failed Append grew dst to %q", cases[i].name, out)
						}
					}
					if got != want[i] {
						t.Errorf("%s: got %s, want %s", cases[i].name, got, want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestCanonicalMeansTheSameJSON(t *testing.T) {
	inputs := []string{
		`{"b":[1,2,{"d":"x","c":"\u00e9"}],"a":null}`,
		`[true,false,null,"",0,-1.25e-3]`,
		`{"k\n":"\u0000","k":"\ud83d\ude00"}`,
	}
	for _, in := range inputs {
		got, err := Canonicalize([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var a, b any
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("%s: canonical form %s is not JSON: %v", in, got, err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%s: got %s, which decodes differently", in, got)
		}
	}
}

func TestTooDeep(t *testing.T) {
	in := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Canonicalize([]byte(in)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("got %v, want ErrTooDeep", err)
	}
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Canonicalize([]byte(ok)); err != nil {
		t.Fatalf("depth %d: got %v, want success", MaxDepth, err)
	}
}

func TestAppendStringMatchesCanonicalize(t *testing.T) {
	for _, s := range []string{
		"", "plain", "quote\"back\\slash", "ctl\x01\x1f", "é😀", "tab\tnl\n",
		"order:b0000000-0000-4000-a000-000000000001", "\"", "a\x7f<&>", "bad\xffutf8", "mixé\"run\\of\x00all",
	} {
		q, _ := json.Marshal(s)
		want, err := Canonicalize(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
}

func BenchmarkCanonicalize(b *testing.B) {
	src := []byte(`{"status": "shipped", "items": [{"sku": "WIDGET-1", "quantity": 2, "price": 29.99}, {"sku": "GADGET-3", "quantity": 1, "price": 19.99}], "customer_id": "550e8400-e29b-41d4-a716-446655440003", "total": 79.97, "placed_at": 1705312800, "note": "leave at the door, please"}`)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	dst := make([]byte, 0, 512)
	for b.Loop() {
		var err error
		if dst, err = Append(dst[:0], src); err != nil {
			b.Fatal(err)
		}
	}
}

// IsCanonical must never accept a text that Canonicalize changes or refuses, and must accept the
// canonical texts it is meant for.
func TestIsCanonical(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":[true,false,null],"c":{"d":"x"}}`, true},
		{`"tab\tquote\"back\\slash\u0001\u001f"`, true},
		{`"é😀"`, true},
		{`-0.5e-3`, true},
		{`[]`, true},
		{`{}`, true},
		{`{"b":1,"a":2}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"a": 1}`, false},
		{` 1`, false},
		{`1 `, false},
		{`1E3`, false},
		{`1e+3`, false},
		{`01`, false},
		{`"\/"`, false},
		{`"\u00e9"`, false},
		{`"\u000a"`, false},
		{`"\u001F"`, false},
		{"\"\x01\"", false},
		{"\"\xff\"", false},
		{`{"k\n":1}`, false}, // canonical, but keys with escapes are left to Canonicalize
		{`[1,]`, false},
		{`tru`, false},
		{``, false},
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false},
	} {
		if got := IsCanonical([]byte(c.in)); got != c.want {
			t.Errorf("IsCanonical(%.40q): got %v, want %v", c.in, got, c.want)
		}
	}
	for _, fc := range readCases(t, "testdata/canonicalize.txt") {
		for _, x := range []string{fc.input, fc.want} {
			canon, err := Canonicalize([]byte(x))
			exact := err == nil && string(canon) == x
			if got := IsCanonical([]byte(x)); got && !exact {
				t.Errorf("%s: IsCanonical(%q) = true, but Canonicalize gives %q, %v", fc.name, x, canon, err)
			} else if !got && exact && !strings.Contains(x, `\`) {
				t.Errorf("%s: IsCanonical(%q) = false for a canonical text", fc.name, x)
			}
		}
	}
}

func BenchmarkIsCanonical(b *testing.B) {
	src := []byte(`{"customer_id":"550e8400-e29b-41d4-a716-446655440003","items":[{"price":29.99,"quantity":2,"sku":"WIDGET-1"}],"note":"leave at the door, please","status":"paid","total":79.97}`)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if !IsCanonical(src) {
			b.Fatal("not canonical")
		}
	}
}

// TestSafeRun compares safeRun with a byte-by-byte scan on texts that put each kind of byte at
// each distance from the start, and on random texts.
func TestSafeRun(t *testing.T) {
	naive := func(src []byte, i int) int {
		for i < len(src) && safeASCII[src[i]] {
			i++
		}
		return i
	}
	for b := range 256 {
		for at := range 20 {
			src := append(bytes.Repeat([]byte("a"), at), byte(b), 'z', 'z')
			for start := range min(at+1, 10) {
				if got, want := safeRun(src, start), naive(src, start); got != want {
					t.Fatalf("byte %#x at %d, from %d: safeRun = %d, want %d", b, at, start, got, want)
				}
			}
		}
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 10000 {
		src := make([]byte, rng.IntN(40))
		for i := range src {
			if rng.IntN(8) == 0 {
				src[i] = byte(rng.IntN(256))
			} else {
				src[i] = byte(0x20 + rng.IntN(0x60))
			}
		}
		start := rng.IntN(len(src) + 1)
		if got, want := safeRun(src, start), naive(src, start); got != want {
			t.Fatalf("seed %d: safeRun(%q, %d) = %d, want %d", seed, src, start, got, want)
		}
	}
}

// TestPooledParserForgetsData: a parser goes back to the pool after each call, so its scratch
// must not hold an event's data once the call returns (an erased event would live on in it).
func TestPooledParserForgetsData(t *testing.T) {
	p := &parser{src: []byte(`{"b":"secret-value","a":{"d":"nested-secret","c":1}}`)}
	out, err := p.value(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"c":1,"d":"nested-secret"},"b":"secret-value"}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	if scratch := p.tmp[:cap(p.tmp)]; bytes.Contains(scratch, []byte("secret")) {
		t.Fatalf("the scratch kept the data: %q", scratch)
	}
}
