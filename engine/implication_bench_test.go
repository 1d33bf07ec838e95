package engine

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/storage"
	"golang.org/x/crypto/bcrypt"
)

// mapSpec has a plain event and one whose map implication fans out to one event per item.
const mapSpec = `{"agent_types":["user"],"aggregate_types":{
 "order":{"events":{
  "was_noted":{"schema":{"type":"object"},"handler":[{"set":{"target":"","value":"$.data"}}]},
  "was_placed":{"schema":{"type":"object"},"handler":[{"set":{"target":"","value":"$.data"}}],
   "implications":[{"map":{"in":"$.data.items","as":"$item","emit":{"aggregate_type":"inventory","id":"$item.sku","event_type":"was_reserved","data":{"order_id":"$.key","quantity":"$item.qty"}}}}]}}},
 "inventory":{"events":{"was_reserved":{"schema":{"type":"object","properties":{"quantity":{"type":"integer"}}},"handler":[{"increment":{"target":"reserved","by":"$.data.quantity"}}]}}}}}`

func specEngine(b *testing.B, doc string, opts Options) (*Engine, Target) {
	b.Helper()
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
	if _, err := ctl.DeploySpec(inst.ID, control.EnvStaging, "", func(*control.SpecVersion) ([]byte, error) { return []byte(doc), nil }); err != nil {
		b.Fatal(err)
	}
	opts.DataDir, opts.Control = dir, ctl
	e, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e, Target{Instance: inst.ID, Environment: control.EnvStaging}
}

// mapBody is a trigger whose map implies ten events on ten inventory streams.
func mapBody() string {
	items := make([]string, 10)
	for i := range items {
		items[i] = fmt.Sprintf(`{"sku":"c0000000-0000-4000-a000-%012d","qty":1}`, i)
	}
	return `{"data":{"items":[` + strings.Join(items, ",") + `]},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`
}

// BenchmarkImplicationWrite compares a plain write with a write whose map implication adds ten
// events on ten other streams, with fsync and group commit. The target: the map write's
// writes/s at least half the plain write's.
func BenchmarkImplicationWrite(b *testing.B) {
	plain := `{"data":{"items":[]},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`
	for _, writers := range []int{1, 64} {
		for _, c := range []struct{ name, event, body string }{{"none", "was_noted", plain}, {"map10", "was_placed", mapBody()}} {
			b.Run(fmt.Sprintf("implication=%s/writers=%d", c.name, writers), func(b *testing.B) {
				e, t := specEngine(b, mapSpec, Options{SchedulerPoll: -1})
				var next atomic.Int64
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for w := 0; w < writers; w++ {
					n := b.N / writers
					if w == 0 {
						n += b.N % writers
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < n; i++ {
							if _, err := e.Write(t, WriteInput{AggregateType: "order", ID: uuidOf(next.Add(1)), EventType: c.event, Body: []byte(c.body)}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
			})
		}
	}
}

// BenchmarkScheduledFire holds 100,000 pending schedules and fires due batches of 10,000: the
// index's rebuild time at open and the time to fire a batch (schedule.BenchmarkIndex measures
// the index's memory).
func BenchmarkScheduledFire(b *testing.B) {
	const pending, due = 100_000, 10_000
	b.Run(fmt.Sprintf("pending=%d/due=%d", pending, due), func(b *testing.B) {
		e, t := specEngine(b, scheduleSpec, Options{SchedulerPoll: -1, NoSync: true})
		p, err := e.open(t)
		if err != nil {
			b.Fatal(err)
		}
		now := time.Unix(1_700_000_000, 0)
		far := now.Add(365 * 24 * time.Hour).UnixMilli()
		put := func(st storage.EventStore, from, n int, fireAt int64, add bool) {
			for lo := from; lo < from+n; lo += 1000 {
				rec := &storage.Record{}
				for i := lo; i < min(lo+1000, from+n); i++ {
					r := benchSchedule(i, fireAt)
					rec.Puts = append(rec.Puts, storage.Put{Space: schedule.Space, Key: schedule.RecordKey(r.ID), Value: r.Encode()})
					if add {
						p.sched.Add(r)
					}
				}
				if _, err := st.Commit(rec); err != nil {
					b.Fatal(err)
				}
			}
		}
		put(p.store, 0, pending, far, false)
		loadStart := time.Now()
		idx, err := schedule.Load(p.store)
		if err != nil {
			b.Fatal(err)
		}
		loadTime := time.Since(loadStart)
		p.sched = idx

		b.ReportAllocs()
		b.ResetTimer()
		var firing time.Duration
		for n := 0; n < b.N; n++ {
			b.StopTimer()
			put(p.store, pending+n*due, due, now.UnixMilli(), true)
			b.StartTimer()
			start := time.Now()
			rep, err := e.fireDue(p, now)
			if err != nil || rep.Fired != due {
				b.Fatalf("fired %d of %d: %v", rep.Fired, due, err)
			}
			firing += time.Since(start)
		}
		// ResetTimer drops metrics, so every one is reported here.
		b.ReportMetric(float64(firing.Milliseconds())/float64(b.N), "batch-ms")
		b.ReportMetric(float64(due)*float64(b.N)/firing.Seconds(), "fires/s")
		b.ReportMetric(float64(loadTime.Milliseconds()), "load-ms")
		runtime.KeepAlive(idx)
	})
}

func benchSchedule(i int, fireAt int64) *schedule.Record {
	return &schedule.Record{
		ID: fmt.Sprintf("01900000-0000-7000-8000-%012d", i), AggregateType: "note", AggregateID: actorID, EventType: "was_sent",
		Data: []byte(`{"cart":"x"}`), FireAt: fireAt, SourceType: "cart", SourceID: fmt.Sprintf("b0000000-0000-4000-a000-%012d", i%100_000),
		ImpliedBy: implication.ImpliedBy{Key: "cart:x", EventType: "had_item_added", Depth: 1},
	}
}
