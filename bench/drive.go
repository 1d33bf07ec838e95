package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Load says how to drive an operation.
type Load struct {
	// Conns is the number of concurrent connections, one goroutine each.
	Conns int
	// Duration is how long requests are started for.
	Duration time.Duration
	// Rate, when positive, makes the run open-loop: requests are due every 1/Rate seconds in
	// total, and latency is measured from the due time. Zero makes it closed-loop.
	Rate float64
	// Ops, when positive, stops the run after that many requests even before Duration.
	Ops uint64
}

// Op performs one request on connection conn; seq numbers the requests of a run from 0.
type Op func(conn int, seq uint64) error

// DriveResult is what one drive measured.
type DriveResult struct {
	Hist     Histogram
	Ops      uint64
	Errors   uint64
	FirstErr error
	Elapsed  time.Duration
}

// Drive runs op under load until load.Duration has passed or ctx ends, and returns the merged
// measurements. Requests that are due but not yet started when the time is up are not sent.
func Drive(ctx context.Context, load Load, op Op) *DriveResult {
	conns := max(load.Conns, 1)
	var period time.Duration
	if load.Rate > 0 {
		period = time.Duration(float64(time.Second) / load.Rate)
	}
	var next atomic.Uint64
	start := time.Now()
	deadline := start.Add(load.Duration)
	runs := make([]DriveResult, conns)
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &runs[c]
			for ctx.Err() == nil {
				seq := next.Add(1) - 1
				if load.Ops > 0 && seq >= load.Ops {
					return
				}
				begin := time.Now()
				if period > 0 {
					due := start.Add(time.Duration(seq) * period)
					if !due.Before(deadline) {
						return
					}
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
					// Measuring from the due time, not the send time, charges a stall to every
					// request that queued behind it: the coordinated-omission correction.
					begin = due
				} else if !begin.Before(deadline) {
					return
				}
				err := op(c, seq)
				r.Hist.Record(time.Since(begin))
				r.Ops++
				if err != nil {
					r.Errors++
					if r.FirstErr == nil {
						r.FirstErr = err
					}
				}
			}
		}()
	}
	wg.Wait()
	total := &DriveResult{Elapsed: time.Since(start)}
	for i := range runs {
		total.Hist.Merge(&runs[i].Hist)
		total.Ops += runs[i].Ops
		total.Errors += runs[i].Errors
		if total.FirstErr == nil {
			total.FirstErr = runs[i].FirstErr
		}
	}
	return total
}
