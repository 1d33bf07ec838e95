package schedule

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/storage"
)

// BenchmarkIndex builds the index of 100,000 pending schedules, each with one cancel pattern,
// and takes a due batch of 10,000 off it: memory per schedule and the cost of a poll.
func BenchmarkIndex(b *testing.B) {
	const pending, due = 100_000, 10_000
	b.Run(fmt.Sprintf("pending=%d/due=%d", pending, due), func(b *testing.B) {
		recs := make([]*Record, pending)
		for i := range recs {
			src := fmt.Sprintf("b0000000-0000-4000-a000-%012d", i)
			recs[i] = &Record{ID: fmt.Sprintf("01900000-0000-7000-8000-%012d", i), FireAt: int64(i), SourceType: "cart", SourceID: src,
				CancelOn: []implication.Match{{AggregateType: "cart", ID: src, EventType: "was_checked_out"}}}
		}
		var mem float64
		b.ReportAllocs()
		for n := 0; n < b.N; n++ {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			x := NewIndex()
			for _, r := range recs {
				x.Add(r)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			mem = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / pending
			if got := len(x.Due(due - 1)); got != due {
				b.Fatalf("got %d due, want %d", got, due)
			}
			if got := x.Canceled(storage.StreamKey{Type: "cart", ID: recs[pending-1].SourceID}, "was_checked_out"); len(got) != 1 {
				b.Fatalf("got %v canceled", got)
			}
		}
		b.ReportMetric(mem, "bytes/schedule")
	})
}
