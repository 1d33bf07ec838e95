package tombstone

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/j17-go/j17/storage"
)

// BenchmarkRefPuts measures what the actor and target index adds to every write.
func BenchmarkRefPuts(b *testing.B) {
	meta := json.RawMessage(`{"actor":{"id":"a0000000-0000-4000-a000-000000000001","type":"user"},"target":{"id":"b0000000-0000-4000-a000-000000000002","type":"user"},"timestamp":1741444200}`)
	for _, n := range []int{1, 10, 100} {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			evs := make([]storage.NewEvent, n)
			for i := range evs {
				evs[i] = storage.NewEvent{Type: "was_sent", Metadata: meta}
			}
			apps := []storage.Append{{Stream: storage.StreamKey{Type: "message", ID: "c0000000-0000-4000-a000-000000000003"}, Events: evs}}
			sp := cascadingMessages(b)
			b.ReportAllocs()
			b.SetBytes(int64(n * len(meta)))
			for b.Loop() {
				AppendRefPuts(nil, apps, sp)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
