package tick

import (
	"strings"
	"testing"
)

// sameString compares keys with loads of several sizes chosen by length: every
// length, and a difference at every position, must give what == gives.
func TestSameString(t *testing.T) {
	for n := 0; n <= 80; n++ {
		a := strings.Repeat("k", n)
		b := strings.Clone(a)
		if !sameString(a, b) {
			t.Fatalf("sameString(%q, copy) = false", a)
		}
		for i := 0; i < n; i++ {
			c := []byte(b)
			c[i] = 'x'
			if sameString(a, string(c)) {
				t.Fatalf("sameString(%q, %q) = true", a, c)
			}
		}
		if sameString(a, a+"k") || sameString(a+"k", a) {
			t.Fatalf("keys of lengths %d and %d compared equal", n, n+1)
		}
	}
}
