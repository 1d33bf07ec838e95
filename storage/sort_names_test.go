package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortNames checks sortNames against the names bucket's own order, the bytes of type 0 id,
// on names made to defeat its shortcuts: types that prefix one another, ids shorter than eight
// bytes, ids equal in their first eight bytes, and NUL bytes where the shortcut pads with them.
func TestSortNames(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	types := []string{"a", "ab", "order", "inventory", "b", "a\x01"}
	ids := func() string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("%x", r.Uint32()&0xfff) // short
		case 1:
			return "prefix00" + fmt.Sprint(r.IntN(50)) // a shared first eight bytes
		case 2:
			return "ab" + string([]byte{0, byte(r.IntN(3))})[:r.IntN(3)] // NULs and padding
		default:
			return fmt.Sprintf("%08x-%04x", r.Uint32(), r.Uint32()&0xffff)
		}
	}
	for round := range 50 {
		var es []nameEntry
		seen := map[StreamKey]bool{}
		for no := range 1 + r.IntN(400) {
			k := StreamKey{Type: types[r.IntN(len(types))], ID: ids()}
			if !seen[k] {
				seen[k] = true
				es = append(es, nameEntry{k, uint64(no + 1)})
			}
		}
		want := slices.Clone(es)
		slices.SortFunc(want, func(a, b nameEntry) int {
			return bytes.Compare(streamKeyBytes(nil, a.key), streamKeyBytes(nil, b.key))
		})
		if got := sortNames(es); !slices.Equal(got, want) {
			t.Fatalf("round %d: sortNames gave\n%v\nwant\n%v", round, got, want)
		}
	}
}
