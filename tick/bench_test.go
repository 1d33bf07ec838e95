package tick

import (
	"fmt"
	"runtime"
	"testing"
)

// mallocs is the number of heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// benchHandlers is a typical aggregate: set, merge, append, upsert and
// increment handlers.
var benchHandlers = map[string]string{
	"was_opened":          `[{"set": {"target": "", "value": "$.data"}}, {"set": {"target": "status", "value": "open"}}]`,
	"had_profile_updated": `[{"merge": {"target": "profile", "value": "$.data"}}]`,
	"had_entry_added":     `[{"append": {"target": "entries", "value": "$.data"}}]`,
	"had_address_saved":   `[{"upsert": {"target": "addresses", "match": {"id": "$.data.id"}, "value": "$.data"}}]`,
	"had_balance_changed": `[{"increment": {"target": "balance", "by": "$.data.amount"}}, {"set": {"target": "last_change", "value": "$.metadata.timestamp"}}]`,
}

// benchEvents makes n stored events of about 300 bytes each.
func benchEvents(n int) [][]byte {
	const key = `"key":"account:2f1c7a9e-3b4d-4e5f-8a6b-7c8d9e0f1a2b"`
	meta := func(i int) string {
		return fmt.Sprintf(`"metadata":{"timestamp":%d,"actor":{"type":"user","id":"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9"}}`, 1710000000+i)
	}
	out := make([][]byte, n)
	out[0] = []byte(`{` + key + `,"type":"was_opened","data":{"owner":"Alice Example","currency":"EUR","plan":"standard","region":"eu-west","tags":["new","web"],"referral":"spring-campaign"},` + meta(0) + `}`)
	for i := 1; i < n; i++ {
		var data, typ string
		switch i % 5 {
		case 0:
			typ = "had_profile_updated"
			data = fmt.Sprintf(`{"email":"alice+%d@example.com","phone":"+33 1 23 45 67 %02d","locale":"fr-FR","newsletter":true}`, i, i%100)
		case 1:
			typ = "had_entry_added"
			data = fmt.Sprintf(`{"id":"e-%06d","label":"Monthly subscription fee","amount":%d.50,"category":"billing"}`, i, i%97)
		case 2:
			typ = "had_address_saved"
			data = fmt.Sprintf(`{"id":"addr-%d","street":"%d Rue de Rivoli","city":"Paris","zip":"75001","country":"FR"}`, i%8, i%200)
		default:
			typ = "had_balance_changed"
			data = fmt.Sprintf(`{"amount":%d,"reason":"card payment at merchant","merchant":"Cafe de Flore","ref":"tx-%08d"}`, i%50-20, i)
		}
		out[i] = []byte(`{` + key + `,"type":"` + typ + `","data":` + data + `,` + meta(i) + `}`)
	}
	return out
}

func compileAll(tb testing.TB, src map[string]string) map[string]*Handler {
	tb.Helper()
	hs := make(map[string]*Handler, len(src))
	for typ, raw := range src {
		h, err := CompileHandler([]byte(raw))
		if err != nil {
			tb.Fatalf("%s: %v", typ, err)
		}
		hs[typ] = h
	}
	return hs
}

// BenchmarkReplay decodes stored events from raw JSON and folds them into
// the final state with no snapshot. Target: 10,000 events in 5 ms on one core.
func BenchmarkReplay(b *testing.B) {
	hs := compileAll(b, benchHandlers)
	for _, n := range []int{10000} {
		evs := benchEvents(n)
		total := 0
		for _, e := range evs {
			total += len(e)
		}
		b.Run(fmt.Sprintf("events=%d/size=%d", n, total/n), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			cpu0, m0 := cpuNanos(), mallocs()
			for b.Loop() {
				rp := NewReplayer(hs, Value{})
				for _, raw := range evs {
					if err := rp.ApplyJSON(raw); err != nil {
						b.Fatal(err)
					}
				}
				_ = rp.State()
			}
			perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n)
			b.ReportMetric(perEvent, "ns/event")
			b.ReportMetric(1e9/perEvent, "events/s")
			b.ReportMetric(perEvent*float64(n)/1e6, "ms/replay")
			cpuPerEvent := float64(cpuNanos()-cpu0) / float64(b.N) / float64(n)
			b.ReportMetric(cpuPerEvent, "cpu-ns/event")
			b.ReportMetric(cpuPerEvent*float64(n)/1e6, "cpu-ms/replay")
			b.ReportMetric(float64(mallocs()-m0)/float64(b.N)/float64(n), "allocs/event")
		})
	}
}

// BenchmarkParseJSON is the decoding part of a replay alone.
func BenchmarkParseJSON(b *testing.B) {
	evs := benchEvents(1000)
	total := 0
	for _, e := range evs {
		total += len(e)
	}
	b.Run(fmt.Sprintf("size=%d", total/len(evs)), func(b *testing.B) {
		b.SetBytes(int64(total / len(evs)))
		b.ReportAllocs()
		var p parser
		i := 0
		cpu0 := cpuNanos()
		for b.Loop() {
			if _, err := p.parse(evs[i%len(evs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// orderHandlers are the handlers of the Tick page's "Complete example:
// order management".
var orderHandlers = map[string]string{
	"was_placed": `[{"set": {"target": "", "value": "$.data"}}, {"set": {"target": "status", "value": "pending"}},
		{"set": {"target": "placed_at", "value": "$.metadata.timestamp"}}]`,
	"had_item_added":   `[{"upsert": {"target": "items", "match": {"sku": "$.data.sku"}, "value": "$.data"}}]`,
	"had_item_removed": `[{"remove": {"target": "items", "where": {"sku": "$.data.sku"}}}]`,
	"had_status_changed": `[{"set": {"target": "status", "value": "$.data.status"}},
		{"if": {"equals": ["$.data.status", "shipped"]}, "then": [{"set": {"target": "shipped_at", "value": "$.metadata.timestamp"}}]},
		{"if": {"equals": ["$.data.status", "delivered"]}, "then": [{"set": {"target": "delivered_at", "value": "$.metadata.timestamp"}}]}]`,
	"had_note_added": `[{"append": {"target": "notes", "value": {"$merge": [{"$": "$.data"}, {"added_at": {"$": "$.metadata.timestamp"}}, {"author": {"$": "$.metadata.actor.id"}}]}}}]`,
}

// orderEvents are decoded events cycling through the order handlers, and
// the number of operations each one runs (an if counts one, plus the
// operations of the branch taken).
func orderEvents(tb testing.TB, n int) ([]*Event, int) {
	tb.Helper()
	statuses := []string{"confirmed", "shipped", "delivered"}
	evs := make([]*Event, n)
	ops := 0
	for i := range evs {
		var raw string
		meta := fmt.Sprintf(`"metadata":{"timestamp":%d,"actor":{"type":"user","id":"op_123"}}`, 1710000000+i)
		switch {
		case i == 0:
			raw = `{"key":"order:o1","type":"was_placed","data":{"customer_id":"cust_001","items":[{"sku":"WIDGET-A","name":"Widget A","price":29.99,"quantity":2}]},` + meta + `}`
			ops += 3
		case i%4 == 1:
			raw = fmt.Sprintf(`{"key":"order:o1","type":"had_item_added","data":{"sku":"SKU-%d","name":"Item","price":9.5,"quantity":1}, %s}`, i%6, meta)
			ops++
		case i%4 == 2:
			raw = fmt.Sprintf(`{"key":"order:o1","type":"had_item_removed","data":{"sku":"SKU-%d"}, %s}`, (i+3)%6, meta)
			ops++
		case i%4 == 3:
			st := statuses[i%3]
			raw = fmt.Sprintf(`{"key":"order:o1","type":"had_status_changed","data":{"status":"%s"}, %s}`, st, meta)
			ops += 3
			if st != "confirmed" {
				ops++
			}
		default:
			raw = `{"key":"order:o1","type":"had_note_added","data":{"text":"Rush delivery requested"},` + meta + `}`
			ops++
		}
		ev, err := ParseEvent([]byte(raw))
		if err != nil {
			tb.Fatal(err)
		}
		evs[i] = ev
	}
	return evs, ops
}

// BenchmarkTick applies the order-management handlers to decoded events.
// Target: at least 10,000,000 operations/s on one core.
func BenchmarkTick(b *testing.B) {
	hs := compileAll(b, orderHandlers)
	const n = 1000
	evs, ops := orderEvents(b, n)
	b.Run(fmt.Sprintf("example=order_management/mode=replayer/events=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		cpu0, m0 := cpuNanos(), mallocs()
		for b.Loop() {
			rp := NewReplayer(hs, Value{})
			for _, ev := range evs {
				if err := rp.Apply(ev); err != nil {
					b.Fatal(err)
				}
			}
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(ops)*float64(b.N)/sec, "ops/s")
		b.ReportMetric(float64(n)*float64(b.N)/sec, "events/s")
		b.ReportMetric(sec*1e9/float64(b.N)/float64(n), "ns/event")
		cpu := float64(cpuNanos()-cpu0) / 1e9
		b.ReportMetric(float64(ops)*float64(b.N)/cpu, "cpu-ops/s")
		b.ReportMetric(float64(mallocs()-m0)/float64(b.N)/float64(n), "allocs/event")
	})
	// mode=ops is Tick alone: the operations applied in place, without the
	// engine's per-event work (handler lookup, created_at/updated_at).
	b.Run(fmt.Sprintf("example=order_management/mode=ops/events=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		byEvent := make([]*Handler, n)
		for i, ev := range evs {
			byEvent[i] = hs[ev.Type]
		}
		cpu0, m0 := cpuNanos(), mallocs()
		for b.Loop() {
			r := run{g: newSession()}
			for i, ev := range evs {
				r.s.Event = ev
				if err := r.ops(byEvent[i].ops); err != nil {
					b.Fatal(err)
				}
			}
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(ops)*float64(b.N)/sec, "ops/s")
		b.ReportMetric(float64(ops)*float64(b.N)/(float64(cpuNanos()-cpu0)/1e9), "cpu-ops/s")
		b.ReportMetric(float64(mallocs()-m0)/float64(b.N)/float64(n), "allocs/event")
	})
	b.Run("example=order_management/mode=apply", func(b *testing.B) {
		b.ReportAllocs()
		state := Value{}
		i := 0
		for b.Loop() {
			ev := evs[i%n]
			if i%n == 0 {
				state = Value{}
			}
			var err error
			if state, err = hs[ev.Type].Apply(state, ev); err != nil {
				b.Fatal(err)
			}
			i++
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(ops)/float64(n)*float64(b.N)/sec, "ops/s")
	})
}
