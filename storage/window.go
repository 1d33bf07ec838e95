package storage

// window is a map from uint64 keys to values for keys that arrive mostly in increasing order and
// leave, if at all, mostly in the same order: the overlay's and the record cache's records by lsn,
// and a stream's events by index. It keeps the keys base..base+len(win)-1 in a slice, the zero
// value marking an empty slot, and drops empty slots from the front. A key that does not extend the
// slice (one below it, as a carry record may set, or far beyond its end) goes to a map.
//
// Go maps answer this load badly: a key set that slides forward leaves deleted slots behind,
// and each insert, lookup and delete probes a table much larger than the caches. Here all three
// are an index into a short slice.
//
// The zero value of T must never be stored: it is what an empty slot holds.
type window[T comparable] struct {
	base uint64
	win  []T
	// buf is win's backing array from its first element: the slots that win dropped from its
	// front are taken back when its end reaches buf's, instead of a new array. Every slot of buf
	// outside win is zero.
	buf   []T
	used  int // non-empty slots of win
	other map[uint64]T
	// one is buf while the window holds one slot: a new stream's window in the overlay often
	// holds one event and no more, and a slot here saves an allocation per new stream. A window
	// must not be copied once used, as its slices may point into it.
	one [1]T
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
		w.extend(int(k-w.base) + 1)
		w.win[k-w.base] = v
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

// extend makes win n slots long, the new ones empty.
func (w *window[T]) extend(n int) {
	switch {
	case n <= cap(w.win):
		w.win = w.win[:n]
	case n <= cap(w.buf)/2:
		// Half of buf or more lies before win: slide win back to buf's start.
		old := len(w.win)
		copy(w.buf, w.win)
		clear(w.buf[old:cap(w.buf)])
		w.win = w.buf[:n]
	case n == 1:
		w.buf, w.win = w.one[:], w.one[:]
	default:
		// Twice the length leaves room to slide back into; an empty window gets just its slots.
		size := 2 * n
		if len(w.win) == 0 {
			size = n
		}
		buf := make([]T, n, size)
		copy(buf, w.win)
		w.buf, w.win = buf, buf
		clear(w.one[:]) // buf may have been one
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
