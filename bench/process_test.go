package bench

import (
	"os"
	"sync/atomic"
	"testing"
)

// pidsOnly is a System of which the memory sampler uses only PIDs.
type pidsOnly struct {
	System
	pids []int
}

func (p pidsOnly) PIDs() []int { return p.pids }

// The sampler walks page tables (smaps_rollup) only for a tree of processes: a single process
// has its peak in VmHWM, and the walk would take processor time from the measured server.
func TestSampleMemoryReadsPssOnlyForATreeOfProcesses(t *testing.T) {
	for _, c := range []struct {
		name      string
		pids      []int
		wantReads bool
	}{
		{"one process", []int{os.Getpid()}, false},
		{"a tree", []int{os.Getpid(), os.Getpid()}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var reads atomic.Int64
			stop := sampleMemory(pidsOnly{pids: c.pids}, func([]int) float64 { reads.Add(1); return 7 })
			peak := stop()
			if got := reads.Load() > 0; got != c.wantReads {
				t.Fatalf("Pss read %d times; want reads: %v", reads.Load(), c.wantReads)
			}
			if c.wantReads && peak != 7 {
				t.Errorf("peak %.1f MiB, want the sampled 7", peak)
			}
			if !c.wantReads && peak <= 0 {
				t.Errorf("peak %.1f MiB, want this process's VmHWM", peak)
			}
		})
	}
}
