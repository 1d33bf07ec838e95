package wal

import (
	"testing"
	"time"
)

// The gather policy, on a log with no flusher: the test's clock advances one step per reading
// and can let a record arrive at each reading, so the outcome depends on no scheduler.
func TestGather(t *testing.T) {
	const step = 10 * time.Microsecond
	cases := []struct {
		name      string
		flushCost time.Duration
		woken     int64
		queued    int64
		arrivals  int64 // records that arrive, one per clock reading, while gather waits
		// wantReads is how many times gather reads the clock: 0 means it does not wait at all.
		wantReads int
		wantCount int64 // records in the group when gather returns
	}{
		// A lone appender, nobody else writing: the next group is taken at once.
		{name: "lone appender", flushCost: 100 * time.Microsecond, woken: 1, wantReads: 0, wantCount: 0},
		// Someone wrote during the fsync: the lone woken appender is waited for.
		{name: "one woken, one queued", flushCost: 100 * time.Microsecond, woken: 1, queued: 1, arrivals: 1, wantReads: 2, wantCount: 2},
		// The woken appenders are counted on top of those already queued, not among them.
		{name: "woken counted over queued", flushCost: 100 * time.Microsecond, woken: 3, queued: 2, arrivals: 3, wantReads: 4, wantCount: 5},
		// Nobody comes back: gather gives up after half a flush (start + 5 steps of 10 µs).
		{name: "nobody returns", flushCost: 100 * time.Microsecond, woken: 4, wantReads: 6},
		// Fewer come back than were woken: still bounded by half a flush.
		{name: "some return", flushCost: 100 * time.Microsecond, woken: 8, arrivals: 2, wantReads: 6, wantCount: 2},
		// A group formed during the fsync (at least 8, and a quarter of the woken): no wait.
		{name: "busy", flushCost: 100 * time.Microsecond, woken: 32, queued: 8, arrivals: 8, wantReads: 0, wantCount: 8},
		// Too few arrived during the fsync for a group of their own: gather waits (here until its
		// bound of half a flush, one arrival per reading).
		{name: "not busy enough", flushCost: 100 * time.Microsecond, woken: 64, queued: 8, arrivals: 64, wantReads: 6, wantCount: 13},
		// No flush measured yet (or a clock that does not move): no wait.
		{name: "no flush cost", woken: 8, wantReads: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &Log{}
			l.flushCost = c.flushCost
			l.mu.count.Store(c.queued)
			now, reads, arrived := time.Unix(0, 0), 0, int64(0)
			l.clock = func() time.Time {
				reads++
				if reads > 1 && arrived < c.arrivals {
					arrived++
					l.mu.count.Add(1)
				}
				now = now.Add(step)
				return now
			}
			l.gather(c.woken)
			if reads != c.wantReads {
				t.Errorf("clock read %d times, want %d", reads, c.wantReads)
			}
			if got := l.mu.count.Load(); got != c.wantCount {
				t.Errorf("group holds %d records when gather returns, want %d", got, c.wantCount)
			}
		})
	}
}

// The flush average moves a quarter of the way on each flush and counts a flush as at most twice
// the average, so one stalled fsync does not stretch the next gathers by its whole length.
func TestNoteFlush(t *testing.T) {
	l := &Log{}
	for i, c := range []struct{ d, want time.Duration }{
		{100 * time.Microsecond, 100 * time.Microsecond},
		{180 * time.Microsecond, 120 * time.Microsecond},
		{5 * time.Millisecond, 150 * time.Microsecond}, // counted as 240 µs
		{-50 * time.Microsecond, 100 * time.Microsecond},
		{100 * time.Microsecond, 100 * time.Microsecond},
	} {
		l.noteFlush(c.d)
		if l.flushCost != c.want {
			t.Errorf("after flush %d (%v): average %v, want %v", i, c.d, l.flushCost, c.want)
		}
	}
}
