package canonical

import "testing"

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
