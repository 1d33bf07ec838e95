package canonical

import (
	"strings"
	"testing"
)

func TestDepth(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`1`, 0}, {`"[{"`, 0}, {`[]`, 1}, {`{}`, 1}, {`[[],[[]]]`, 3},
		{`{"a":{"b":[1,{"c":2}]}}`, 4}, {`["\"[[", "\\", {"x":"]}"}]`, 2}, {`[{"k":"\\\"{"}]`, 2},
	} {
		if got := Depth([]byte(c.src)); got != c.want {
			t.Errorf("Depth(%s) = %d, want %d", c.src, got, c.want)
		}
	}
}

func TestDeeperThan(t *testing.T) {
	for _, c := range []struct {
		src  string
		n    int
		want bool
	}{
		{`{}`, 0, true}, {`{}`, 1, false}, {`[[]]`, 1, true}, {`[[]]`, 2, false},
		{`[[[1]]]`, 2, true}, {`[[[1]]]`, 3, false}, {`{"a":"[[[[[[[[[["}`, 1, false},
		{`{"quantity":1}`, 100, false},
		// Longer than 2n+2 bytes: few brackets, many inside strings, and deep.
		{`[` + strings.Repeat(`"abc",`, 50) + `1]`, 3, false},
		{`[[` + strings.Repeat(`"{[",`, 50) + `1]]`, 3, false},
		{`[[[[` + strings.Repeat(`"x",`, 50) + `1]]]]`, 3, true},
	} {
		if got := DeeperThan([]byte(c.src), c.n); got != c.want {
			t.Errorf("DeeperThan(%s, %d) = %v, want %v", c.src, c.n, got, c.want)
		}
	}
}
