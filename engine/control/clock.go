package control

import "time"

// Clock tells the time. The store reads time only through it, so that tests control key expiry
// and record timestamps.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
