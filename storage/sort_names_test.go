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
// bytes, ids equal in their first eight bytes, NUL bytes where the shortcut pads with them, and,
// in every other round, the ids of two of the types all beginning with the same nine bytes
// (sequential ids), some of them no more than those.
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
			if round%2 == 1 && len(k.Type) == 2 {
				k.ID = "seq-00000" + k.ID[:r.IntN(2)*len(k.ID)]
			}
			if !seen[k] {
				seen[k] = true
				es = append(es, nameEntry{k, uint64(no + 1)})
			}
		}
		var want []nameKey
		for _, e := range es {
			want = append(want, nameKey{streamKeyBytes(nil, e.key), e.no})
		}
		slices.SortFunc(want, func(a, b nameKey) int { return bytes.Compare(a.key, b.key) })
		got := sortNames(es)
		if !slices.EqualFunc(got, want, func(a, b nameKey) bool { return bytes.Equal(a.key, b.key) && a.no == b.no }) {
			t.Fatalf("round %d: sortNames gave\n%v\nwant\n%v", round, got, want)
		}
	}
}

// TestSortKVs checks sortKVs against byte order then seq, on keys made to defeat its
// abbreviations: long shared prefixes (as references have), keys that prefix one another, NUL
// bytes where the abbreviation pads with them, and the same key put several times.
func TestSortKVs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	prefixes := []string{"", "refs\x00actor\x00user\x00", "refs\x00actor\x00user\x000123456789abcdef\x00inventory\x00", "idem\x00"}
	key := func() []byte {
		k := prefixes[r.IntN(len(prefixes))]
		switch r.IntN(4) {
		case 0:
			k += fmt.Sprintf("%x", r.Uint32()&0xff) // short
		case 1:
			k += "0000019a4f" + fmt.Sprintf("%06x", r.IntN(20)) // a shared run of digits
		case 2:
			k += "ab" + string([]byte{0, 0, 0, 0, 0, 0, 0, 0, byte(r.IntN(2))})[:r.IntN(10)] // NULs and padding
		default:
			k += fmt.Sprintf("%08x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
		}
		return []byte(k)
	}
	for round := range 100 {
		n := r.IntN(300)
		if round == 0 {
			n = 2
		}
		kvs := make([]kv, n)
		for i := range kvs {
			kvs[i] = kv{k: key(), seq: i}
			if i > 0 && r.IntN(8) == 0 {
				kvs[i].k = kvs[r.IntN(i)].k // the same key again
			}
		}
		want := slices.Clone(kvs)
		slices.SortFunc(want, func(a, b kv) int {
			if c := bytes.Compare(a.k, b.k); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
		order := sortKVs(kvs)
		if len(order) != len(kvs) {
			t.Fatalf("round %d: %d places for %d kvs", round, len(order), len(kvs))
		}
		for i, o := range order {
			if got := kvs[o.at]; !bytes.Equal(got.k, want[i].k) || got.seq != want[i].seq {
				t.Fatalf("round %d: place %d holds %q (seq %d), want %q (seq %d)", round, i, got.k, got.seq, want[i].k, want[i].seq)
			}
		}
	}
}
