package engine

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
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

// mapBody is a trigger whose map implies one event per SKU, each on its SKU's inventory stream.
func mapBody(skus ...int) string {
	items := make([]string, len(skus))
	for i, sku := range skus {
		items[i] = fmt.Sprintf(`{"sku":"c0000000-0000-4000-a000-%012d","qty":1}`, sku)
	}
	return `{"data":{"items":[` + strings.Join(items, ",") + `]},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`
}

// catalogBodies are orders of ten distinct SKUs drawn at random from a catalog of n (bench/'s
// map/items=10/catalog=10000), and the orders of ten SKUs in catalog order that give every SKU
// its inventory stream before the measurement.
func catalogBodies(n int) (orders, setup []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	orders = make([]string, 4096)
	for i := range orders {
		skus := make([]int, 0, 10)
		for len(skus) < cap(skus) {
			if sku := rng.IntN(n); !slices.Contains(skus, sku) {
				skus = append(skus, sku)
			}
		}
		orders[i] = mapBody(skus...)
	}
	for lo := 0; lo < n; lo += 10 {
		setup = append(setup, mapBody(lo, lo+1, lo+2, lo+3, lo+4, lo+5, lo+6, lo+7, lo+8, lo+9))
	}
	return orders, setup
}

// newStreamBodies are n orders of ten SKUs no other order has: each implies events on ten new
// inventory streams (bench/'s map/items=10).
func newStreamBodies(n int) []string {
	orders := make([]string, n)
	for i := range orders {
		orders[i] = mapBody(10*i, 10*i+1, 10*i+2, 10*i+3, 10*i+4, 10*i+5, 10*i+6, 10*i+7, 10*i+8, 10*i+9)
	}
	return orders
}

// BenchmarkImplicationWrite compares a plain write with a write whose map implication adds ten
// events on ten other streams, with fsync and group commit: the same ten streams every time, ten
// new ones, or ten drawn from a catalog of 10,000 (where looking a stream up misses the
// processor's caches). The target: the map write's writes/s at least half the plain write's.
func BenchmarkImplicationWrite(b *testing.B) {
	plain := `{"data":{"items":[]},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`
	fixed := mapBody(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	catalog, catalogSetup := catalogBodies(10_000)
	cases := []struct {
		name, event string
		bodies      func(n int) []string // the bodies of n orders, taken in turn
		setup       []string
	}{
		{"none", "was_noted", func(int) []string { return []string{plain} }, nil},
		{"map10", "was_placed", func(int) []string { return []string{fixed} }, nil},
		{"map10/new", "was_placed", newStreamBodies, nil},
		{"map10/catalog=10000", "was_placed", func(int) []string { return catalog }, catalogSetup},
	}
	for _, writers := range []int{1, 64} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("implication=%s/writers=%d", c.name, writers), func(b *testing.B) {
				e, t := specEngine(b, mapSpec, Options{SchedulerPoll: -1})
				var next atomic.Int64
				for _, body := range c.setup {
					if _, err := e.Write(t, WriteInput{AggregateType: "order", ID: uuidOf(next.Add(1)), EventType: c.event, Body: []byte(body)}); err != nil {
						b.Fatal(err)
					}
				}
				bodies := c.bodies(b.N)
				var taken atomic.Int64
				b.ReportAllocs()
				b.SetBytes(int64(len(bodies[0])))
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
							body := bodies[int(taken.Add(1)-1)%len(bodies)]
							if _, err := e.Write(t, WriteInput{AggregateType: "order", ID: uuidOf(next.Add(1)), EventType: c.event, Body: []byte(body)}); err != nil {
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

// BenchmarkScheduledFire holds 100,000 pending schedules and fires due batches of 10,000,
// durably: the index's rebuild time at open and the time to fire a batch (schedule.BenchmarkIndex
// measures the index's memory). The batch's events go to 10,000 aggregates (a reminder to each of
// as many users), or all to one, which the scheduler fires one after another to keep their order.
func BenchmarkScheduledFire(b *testing.B) {
	const pending, due = 100_000, 10_000
	for _, targets := range []int{due, 1} {
		b.Run(fmt.Sprintf("pending=%d/due=%d/targets=%d", pending, due, targets), func(b *testing.B) {
			benchScheduledFire(b, pending, due, targets)
		})
	}
}

func benchScheduledFire(b *testing.B, pending, due, targets int) {
	e, t := specEngine(b, scheduleSpec, Options{SchedulerPoll: -1})
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
				r := benchSchedule(i, i%targets, fireAt)
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
}

func benchSchedule(i, target int, fireAt int64) *schedule.Record {
	return &schedule.Record{
		ID: fmt.Sprintf("01900000-0000-7000-8000-%012d", i), AggregateType: "note", AggregateID: fmt.Sprintf("c0000000-0000-4000-a000-%012d", target),
		EventType: "was_sent", Data: []byte(`{"cart":"x"}`), FireAt: fireAt, SourceType: "cart", SourceID: fmt.Sprintf("b0000000-0000-4000-a000-%012d", i%100_000),
		ImpliedBy: implication.ImpliedBy{Key: "cart:x", EventType: "had_item_added", Depth: 1},
	}
}
