package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// One stall of the only connection delays every request due during it. Open-loop latencies,
// measured from the due time, must show that; closed-loop ones see one slow request only.
func TestOpenLoopChargesStallsToQueuedRequests(t *testing.T) {
	const stall = 100 * time.Millisecond
	op := func() Op {
		var stalled atomic.Bool
		return func(_ int, seq uint64) error {
			if seq == 5 && stalled.CompareAndSwap(false, true) {
				time.Sleep(stall)
			}
			return nil
		}
	}
	open := Drive(context.Background(), Load{Conns: 1, Duration: 300 * time.Millisecond, Rate: 1000}, op())
	// About 100 requests were due during the stall: at least a fifth of all had to wait.
	if p80 := open.Hist.Quantile(0.80); p80 < 10*time.Millisecond {
		t.Errorf("open-loop p80: got %v, want at least 10ms (requests queued behind a %v stall)", p80, stall)
	}
	if open.Ops < 250 || open.Ops > 300 {
		t.Errorf("open-loop ops: got %d, want about 300 at 1000/s for 300ms", open.Ops)
	}
	closed := Drive(context.Background(), Load{Conns: 1, Duration: 300 * time.Millisecond}, op())
	if p80 := closed.Hist.Quantile(0.80); p80 > time.Millisecond {
		t.Errorf("closed-loop p80: got %v, want under 1ms (only one request stalled)", p80)
	}
}

func TestDriveCountsErrorsAndStopsAtOps(t *testing.T) {
	boom := errors.New("boom")
	r := Drive(context.Background(), Load{Conns: 4, Duration: time.Minute, Ops: 100}, func(_ int, seq uint64) error {
		if seq%10 == 0 {
			return boom
		}
		return nil
	})
	if r.Ops != 100 || r.Errors != 10 || !errors.Is(r.FirstErr, boom) {
		t.Errorf("got ops=%d errors=%d first=%v, want 100, 10, boom", r.Ops, r.Errors, r.FirstErr)
	}
	if r.Hist.total != 100 {
		t.Errorf("histogram count: got %d, want 100", r.Hist.total)
	}
}
