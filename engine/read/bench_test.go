package read

import (
	"fmt"
	"testing"
	"time"

	"github.com/j17-go/j17/tick"
)

// BenchmarkFold replays a whole stream through its handlers: the cost of an uncached read
// without a snapshot.
func BenchmarkFold(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			st := fill(b, n)
			h := handlers(b)
			if _, err := Fold(st, k, h, tick.Value{}, 0, uint64(n)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := Fold(st, k, h, tick.Value{}, 0, uint64(n)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
