package storage

// window is a map from uint64 keys to values for keys that arrive mostly in increasing order and
// leave mostly in the same order: the overlay's records by lsn, and a stream's events by index.
// It keeps the keys base..base+len(win)-1 in a slice, the zero value marking an empty slot, and
// drops empty slots from the front. A key that does not extend the slice (one below it, as a
// carry record may set, or far beyond its end) goes to a map.
//
// Go maps answer this load badly: a key set that slides forward leaves deleted slots behind,
// and each insert, lookup and delete probes a table much larger than the caches. Here all three
// are an index into a short slice.
//
// The zero value of T must never be stored: it is what an empty slot holds.
type window[T comparable] struct {
	base  uint64
	win   []T
	used  int // non-empty slots of win
	other map[uint64]T
}

// maxWindowGap bounds the empty slots a set may add to reach its key; keys further away go to
// the map.
const maxWindowGap = 64

func (w *window[T]) get(k uint64) (T, bool) {
	var zero T
	if k >= w.base && k-w.base < uint64(len(w.win)) {
		if v := w.win[k-w.base]; v != zero {
			return v, true
		}
	}
	v, ok := w.other[k]
	return v, ok
}

func (w *window[T]) set(k uint64, v T) {
	var zero T
	if w.used == 0 {
		w.base, w.win = k, w.win[:0]
	}
	switch {
	case k >= w.base && k-w.base < uint64(len(w.win)):
		if w.win[k-w.base] == zero {
			w.used++
		}
		w.win[k-w.base] = v
	case k >= w.base && k-w.base-uint64(len(w.win)) <= maxWindowGap:
		for uint64(len(w.win)) < k-w.base {
			w.win = append(w.win, zero)
		}
		w.win = append(w.win, v)
		w.used++
	default:
		if w.other == nil {
			w.other = make(map[uint64]T)
		}
		w.other[k] = v
		return
	}
	// A key that was outside the slice when it was set may be inside it now.
	if w.other != nil {
		delete(w.other, k)
	}
}

// removeIf deletes k unless keep, given its value, says to keep it.
func (w *window[T]) removeIf(k uint64, keep func(T) bool) {
	var zero T
	if k >= w.base && k-w.base < uint64(len(w.win)) && w.win[k-w.base] != zero {
		i := k - w.base
		if keep(w.win[i]) {
			return
		}
		w.win[i] = zero
		w.used--
		for len(w.win) > 0 && w.win[0] == zero {
			w.win = w.win[1:]
			w.base++
		}
		return
	}
	if v, ok := w.other[k]; ok && !keep(v) {
		delete(w.other, k)
		if len(w.other) == 0 {
			w.other = nil
		}
	}
}

func (w *window[T]) remove(k uint64) { w.removeIf(k, func(T) bool { return false }) }

func (w *window[T]) empty() bool { return w.used == 0 && len(w.other) == 0 }
