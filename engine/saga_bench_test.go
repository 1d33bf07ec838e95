package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"golang.org/x/crypto/bcrypt"
)

// sagaBenchSpec has a saga of n steps without await, each emitting one event.
func sagaBenchSpec(n int) string {
	var steps []string
	for i := 0; i < n; i++ {
		steps = append(steps, fmt.Sprintf(`{"name":"s%d","emit":{"aggregate_type":"flow","id":"$.id","event_type":"did_step","data":{"i":%d,"from":"$.data.from"}}}`, i, i))
	}
	return `{"agent_types":["user"],"aggregate_types":{"flow":{"events":{
		"was_started":{"schema":{"type":"object"},"handler":[]},
		"did_step":{"schema":{"type":"object","properties":{"i":{"type":"integer"}}},"handler":[]}}}},
		"modules":{"sagas":{"work":{"trigger":{"aggregate_type":"flow","event_type":"was_started"},"steps":[` + strings.Join(steps, ",") + `]}}}}`
}

// BenchmarkSaga measures a saga from its trigger's write to its completion: the trigger's
// record, one record per step, and the runner's wake-ups between them.
func BenchmarkSaga(b *testing.B) {
	for _, steps := range []int{1, 4} {
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("steps=%d/sync=%t", steps, sync), func(b *testing.B) {
				dir := b.TempDir()
				ctl, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = ctl.Close() })
				inst, err := ctl.CreateInstance("bench")
				if err != nil {
					b.Fatal(err)
				}
				doc := []byte(sagaBenchSpec(steps))
				if _, err := ctl.DeploySpec(inst.ID, control.EnvStaging, "", func(*control.SpecVersion) ([]byte, error) { return doc, nil }); err != nil {
					b.Fatal(err)
				}
				e, err := New(Options{DataDir: dir, Control: ctl, NoSync: !sync})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = e.Close() })
				t := Target{Instance: inst.ID, Environment: control.EnvStaging}
				p, err := e.open(t)
				if err != nil {
					b.Fatal(err)
				}
				body := []byte(`{"data":{"from":"bench"},"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}}`)
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if _, err := e.Write(t, WriteInput{AggregateType: "flow", ID: uuidOf(int64(i)), EventType: "was_started", Body: body}); err != nil {
						b.Fatal(err)
					}
					for p.sagas.count() > 0 {
						time.Sleep(20 * time.Microsecond)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				reportLatency(b, lat)
				b.ReportMetric(float64(b.N*steps)/b.Elapsed().Seconds(), "steps/s")
			})
		}
	}
}

// count is the number of running sagas.
func (s *sagaSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running)
}
