package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortKVs checks sortKVs against comparing whole keys, then seq, on keys built to meet every
// path of the radix sort: long shared prefixes, keys that end inside the eight bytes it reads,
// NUL bytes where a shorter key would be padded, repeated keys (their order is their seq), and
// groups small and large.
func TestSortKVs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	parts := []string{"refs\x00actor\x00user\x00550e8400-e29b-41d4-a716-446655440000\x00", "inventory\x00", "order\x00", "idem\x00", "a", "", "\x00", "\x00\x00"}
	keyOf := func() []byte {
		var k []byte
		for range r.IntN(4) {
			k = append(k, parts[r.IntN(len(parts))]...)
		}
		switch r.IntN(4) {
		case 3:
			// Equal in eight bytes past the shared part, different after: a radix step, then
			// another on the bytes after.
			k = append(k, []string{"inventor", "inventos", "order\x00\x00\x00"}[r.IntN(3)]...)
			k = fmt.Appendf(k, "%016x%x", 1705312800000+r.IntN(40), r.Uint32()&0xfff)
		case 0:
			k = fmt.Appendf(k, "%016x", 1705312800000+r.IntN(40))
		case 1:
			k = fmt.Appendf(k, "%x", r.Uint32()&0xff)
		}
		return k
	}
	for round := range 300 {
		n := r.IntN(3000)
		if round%3 == 0 {
			n = r.IntN(40)
		}
		kvs := make([]kv, n)
		// Some rounds draw from a few long keys: runs of equal keys past the small-group size.
		var few [][]byte
		if round%5 == 1 {
			for range 3 {
				few = append(few, fmt.Appendf([]byte(parts[0]), "%016x-%d-0123456789", 1705312800000, r.IntN(3)))
			}
		}
		for i := range kvs {
			if few != nil {
				kvs[i].k = few[r.IntN(len(few))]
			} else if i > 0 && r.IntN(8) == 0 {
				kvs[i].k = kvs[r.IntN(i)].k // a key put again
			} else {
				kvs[i].k = keyOf()
			}
			kvs[i].seq = i
		}
		want := slices.Clone(kvs)
		slices.SortFunc(want, compareKV)
		sortKVs(kvs)
		for i := range kvs {
			if string(kvs[i].k) != string(want[i].k) || kvs[i].seq != want[i].seq {
				t.Fatalf("round %d, %d keys: at %d got %q seq %d, want %q seq %d", round, n, i, kvs[i].k, kvs[i].seq, want[i].k, want[i].seq)
			}
		}
	}
}

// BenchmarkSortKVs sorts a transaction's worth of the references of new streams, as orders of
// ten implied events put them, by whole keys and by sortKVs.
func BenchmarkSortKVs(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 1 << 16
	src := make([]kv, n)
	for i := range src {
		typ := "inventory"
		if i%11 == 0 {
			typ = "order"
		}
		src[i] = kv{k: fmt.Appendf(nil, "refs\x00actor\x00user\x00550e8400-e29b-41d4-a716-446655440000\x00%s\x00%016x%08x-0000-4000-a000-000000000000", typ, 1705312800000+i/70, r.Uint32()), seq: i}
	}
	kvs := make([]kv, n)
	for _, bc := range []struct {
		name string
		sort func([]kv)
	}{{"whole", func(k []kv) { slices.SortFunc(k, compareKV) }}, {"radix", sortKVs}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				copy(kvs, src)
				bc.sort(kvs)
			}
		})
	}
}
