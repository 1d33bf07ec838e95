package engine

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/spec"
)

// benchSpec validates a 300-byte-ish order event with a real schema.
const benchSpec = `{"agent_types":["user"],"aggregate_types":{"order":{"events":{
  "was_placed":{"schema":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1},"price":{"type":"number"},"note":{"type":"string","maxLength":200}},"required":["sku","qty","price"]},
    "handler":[{"set":{"target":"","value":"$.data"}}]},
  "had_item_added":{"schema":{"type":"object"},"handler":[{"append":{"target":"items","value":"$.data"}},{"increment":{"target":"count"}}]}}}}}`

const benchBody = `{"data":{"sku":"WIDGET-1","qty":2,"price":29.99,"note":"leave at the door, ring twice, the dog is friendly and the cat is not"},"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}}`

func benchEngine(b *testing.B, opts Options) (*Engine, Target) {
	b.Helper()
	if _, report := spec.Load([]byte(benchSpec)); !report.OK() {
		b.Fatal(report.Err())
	}
	return specEngine(b, benchSpec, opts)
}

func uuidOf(i int64) string { return fmt.Sprintf("b0000000-0000-4000-a000-%012d", i) }

// BenchmarkWrite writes single validated events, each to a fresh aggregate with a random id (as
// clients mint them), from many writers, with fsync: the engine's share of the HTTP write target.
func BenchmarkWrite(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d/fsync=true", writers), func(b *testing.B) {
			e, t := benchEngine(b, Options{})
			lat := make([][]time.Duration, writers)
			b.ReportAllocs()
			b.SetBytes(int64(len(benchBody)))
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / writers
			for w := 0; w < writers; w++ {
				n := per
				if w == 0 {
					n += b.N % writers
				}
				wg.Add(1)
				go func(w, n int) {
					defer wg.Done()
					for i := 0; i < n; i++ {
						start := time.Now()
						_, err := e.Write(t, WriteInput{AggregateType: "order", ID: ident.NewV4(), EventType: "was_placed", Body: []byte(benchBody)})
						if err != nil {
							b.Error(err)
							return
						}
						lat[w] = append(lat[w], time.Since(start))
					}
				}(w, n)
			}
			wg.Wait()
			b.StopTimer()
			reportLatency(b, slices.Concat(lat...))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRead reads one aggregate of n events: uncached (a full replay, snapshots off), from a
// snapshot plus tail, and cached.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, mode := range []string{"replay", "snapshot", "cached"} {
			b.Run(fmt.Sprintf("events=%d/mode=%s", n, mode), func(b *testing.B) {
				opts := Options{NoSync: true, SnapshotEvery: 1 << 40}
				if mode == "snapshot" {
					opts.SnapshotEvery = uint64(n) - 10
				}
				e, t := benchEngine(b, opts)
				id := uuidOf(1)
				body := []byte(`{"data":{"sku":"GADGET-2","qty":1,"price":19.99},"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}}`)
				for i := 0; i < n-10; i++ {
					if _, err := e.Write(t, WriteInput{AggregateType: "order", ID: id, EventType: "had_item_added", Body: body}); err != nil {
						b.Fatal(err)
					}
				}
				sync := mode != "cached"
				if _, err := e.Aggregate(t, "order", id, ReadQuery{Synchronous: sync}); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < 10; i++ {
					if _, err := e.Write(t, WriteInput{AggregateType: "order", ID: id, EventType: "had_item_added", Body: body}); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := e.Aggregate(t, "order", id, ReadQuery{Synchronous: sync}); err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if _, err := e.Aggregate(t, "order", id, ReadQuery{Synchronous: sync}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				reportLatency(b, lat)
			})
		}
	}
}
