package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func BenchmarkTmpFanout(b *testing.B) {
	for _, fan := range []int{0, 10} {
		b.Run(fmt.Sprintf("fan=%d", fan), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			trig := []byte(`{"items":[{"qty":1,"sku":"c0000000-0000-4000-a000-000000000000"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000001"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000002"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000003"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000004"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000005"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000006"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000007"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000008"},{"qty":1,"sku":"c0000000-0000-4000-a000-000000000009"}]}`)
			if fan == 0 {
				trig = []byte(`{"items":[]}`)
			}
			imeta := []byte(`{"actor":{"id":"550e8400-e29b-41d4-a716-446655440000","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:b0000000-0000-4000-a000-000000000001"},"timestamp":1705312800}`)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < 64; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						rec := &Record{Appends: []Append{{Stream: StreamKey{"order", fmt.Sprintf("b0000000-0000-4000-a000-%012d", n)}, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_placed", Data: trig, Metadata: benchMeta, Timestamp: 1705312800}}}}}
						for i := 0; i < fan; i++ {
							rec.Appends = append(rec.Appends, Append{Stream: StreamKey{"inventory", fmt.Sprintf("c0000000-0000-4000-a000-%012d", i)}, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_reserved", Data: []byte(`{"order_id":"order:b0000000-0000-4000-a000-000000000001","quantity":1}`), Metadata: imeta, Timestamp: 1705312800}}})
						}
						if _, err := s.Commit(rec); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}
