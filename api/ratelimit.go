package api

import (
	"math"
	"sync"
	"time"

	"github.com/j17-go/j17/engine/control"
)

// limiter is a table of token buckets, one per client id. Each bucket holds up to perMinute
// tokens and refills continuously at perMinute tokens a minute; a request takes one token.
//
// The table is bounded: when it is full, buckets that have refilled completely are dropped (a
// full bucket behaves exactly like a missing one), and if that frees too little, arbitrary
// buckets go until an eighth of the table is free. The sweep is O(table) but runs at most once
// per max/8 insertions.
type limiter struct {
	perMinute int // 0 = off
	max       int
	clock     control.Clock
	mu        struct {
		sync.Mutex
		buckets map[string]*bucket // protected by mu
	}
}

type bucket struct {
	tokens float64
	last   time.Time
}

// verdict is the outcome of one take.
type verdict struct {
	limit      int
	remaining  int
	ok         bool
	retryAfter time.Duration
}

func newLimiter(perMinute, max int, clock control.Clock) *limiter {
	l := &limiter{perMinute: perMinute, max: max, clock: clock}
	l.mu.buckets = map[string]*bucket{}
	return l
}

func (l *limiter) enabled() bool { return l.perMinute > 0 }

// take spends one token of id's bucket, if it has one.
func (l *limiter) take(id string) verdict {
	now := l.clock.Now()
	capacity := float64(l.perMinute)
	perNano := capacity / float64(time.Minute)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.mu.buckets[id]
	if b == nil {
		if len(l.mu.buckets) >= l.max {
			l.sweepLocked(now)
		}
		b = &bucket{tokens: capacity, last: now}
		l.mu.buckets[id] = b
	} else if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(capacity, b.tokens+float64(elapsed)*perNano)
		b.last = now
	}
	if b.tokens < 1 {
		wait := time.Duration(math.Ceil((1 - b.tokens) / perNano))
		return verdict{limit: l.perMinute, remaining: 0, ok: false, retryAfter: wait}
	}
	b.tokens--
	return verdict{limit: l.perMinute, remaining: int(b.tokens), ok: true}
}

// sweepLocked makes room in a full table.
// REQUIRES: mu held.
func (l *limiter) sweepLocked(now time.Time) {
	capacity := float64(l.perMinute)
	perNano := capacity / float64(time.Minute)
	for id, b := range l.mu.buckets {
		if b.tokens+float64(now.Sub(b.last))*perNano >= capacity {
			delete(l.mu.buckets, id)
		}
	}
	target := l.max - l.max/8
	for id := range l.mu.buckets {
		if len(l.mu.buckets) < target {
			break
		}
		delete(l.mu.buckets, id)
	}
}
