package storage

import (
	"math/rand/v2"
	"testing"
)

// TestWindowModel drives a window and a plain map with the same random operations, mostly the
// sliding pattern the overlay makes and some keys far below or beyond it, and compares them.
func TestWindowModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	var w window[uint64]
	model := map[uint64]uint64{}
	next, oldest := uint64(1000), uint64(1000)
	check := func(op int, k uint64) {
		t.Helper()
		got, ok := w.get(k)
		want, wantOK := model[k]
		if got != want || ok != wantOK {
			t.Fatalf("seed %d, op %d: get(%d) = %d, %v; want %d, %v", seed, op, k, got, ok, want, wantOK)
		}
	}
	for op := range 200_000 {
		var k uint64
		switch r := rng.IntN(100); {
		case r < 45: // append at the end
			k, next = next, next+1
			v := 1 + rng.Uint64N(1<<20)
			w.set(k, v)
			model[k] = v
		case r < 85: // trim the oldest
			if oldest < next {
				k = oldest
				oldest++
				w.removeIf(k, func(uint64) bool { return false })
				delete(model, k)
			}
		case r < 90: // a carry below, or a key well beyond the end
			if rng.IntN(2) == 0 {
				k = rng.Uint64N(next + 1)
			} else {
				k = next + rng.Uint64N(3*maxWindowGap)
			}
			v := 1 + rng.Uint64N(1<<20)
			w.set(k, v)
			model[k] = v
		case r < 95: // remove only a matching value
			k = rng.Uint64N(next + 2*maxWindowGap)
			v := model[k]
			w.removeIf(k, func(x uint64) bool { return x != v || rng.IntN(2) == 0 })
			if got, ok := w.get(k); !ok {
				delete(model, k)
			} else if got != v {
				t.Fatalf("seed %d, op %d: removeIf(%d) changed the value", seed, op, k)
			}
		default:
			k = rng.Uint64N(next + 2*maxWindowGap)
		}
		check(op, k)
		if w.empty() != (len(model) == 0) {
			t.Fatalf("seed %d, op %d: empty() = %v with %d keys", seed, op, w.empty(), len(model))
		}
	}
	for k := range model {
		check(-1, k)
	}
}

// A window that slides at a steady length takes back the slots it dropped from its front instead
// of allocating a new array each time its end reaches the old one's.
func TestWindowSlidesWithoutAllocating(t *testing.T) {
	var w window[uint64]
	const length = 1000
	next := uint64(1)
	for ; next <= length; next++ {
		w.set(next, next)
	}
	slide := func(n int) {
		for range n {
			w.set(next, next)
			w.remove(next - length)
			next++
		}
	}
	// The array may grow once more at the first slides, to twice the length.
	slide(length)
	array := &w.buf[:1][0]
	slide(10 * length)
	if &w.buf[:1][0] != array {
		t.Fatalf("the window allocated a new array while sliding (cap %d, length %d)", cap(w.buf), len(w.win))
	}
	for k := next - length; k < next; k++ {
		if v, ok := w.get(k); !ok || v != k {
			t.Fatalf("get(%d) = %d, %v", k, v, ok)
		}
	}
}

// A new window takes one slot: most streams in the overlay hold one event and never grow.
func TestNewWindowTakesOneSlot(t *testing.T) {
	var w window[uint64]
	w.set(7, 1)
	if cap(w.buf) != 1 {
		t.Fatalf("a window of one key has room for %d", cap(w.buf))
	}
}

// A window of one key takes no allocation, and one that grows past it keeps no copy of what it
// held there (for a window of pointers, a copy would keep the record alive).
func TestWindowOfOneKey(t *testing.T) {
	ws, r := make([]window[*record], 101), &record{lsn: 7}
	i := 0
	if allocs := testing.AllocsPerRun(100, func() {
		ws[i].set(7, r)
		i++
	}); allocs != 0 {
		t.Errorf("a window of one key allocates %v times, want 0", allocs)
	}
	var w window[*record]
	first := &record{lsn: 1}
	w.set(1, first)
	for l := uint64(2); l <= 4; l++ {
		w.set(l, &record{lsn: l})
	}
	for l := uint64(1); l <= 4; l++ {
		if r, ok := w.get(l); !ok || r.lsn != l {
			t.Fatalf("get(%d) = %v, %v", l, r, ok)
		}
	}
	if w.one[0] != nil {
		t.Errorf("the window grew and still holds its first value in its one slot")
	}
}
