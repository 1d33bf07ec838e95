package fuzz

import (
	"errors"
	"testing"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

const implicationSpec = `{"singletons":["log"],"agent_types":["user"],"aggregate_types":{
 "order":{"events":{"was_placed":{"schema":{"type":"object"},"handler":[],"implications":[
  {"condition":{"gte":["$.data.total",10]},"emit":{"aggregate_type":"audit","id":"log","event_type":"had_entry","data":{"merge":["@.defaults",{"m":{"concat":["order ","$.key"]}},{"n":{"coalesce":["$.data.name","none"]}}]}}},
  {"map":{"in":"$.data.items","as":"$item","condition":{"not_equals":["$item.skip",true]},"emit":{"aggregate_type":"audit","id":"$item.id","event_type":"had_entry","data":{"q":"$item.q"}}}},
  {"map":{"in":"$.data.roles.$entries","as":"$e","emit":{"aggregate_type":"audit","id":"$e.key","event_type":"had_entry","data":{"role":"$e.value"}}}},
  {"schedule":{"delay":"1h","emit":{"aggregate_type":"audit","id":"$.data.who","event_type":"had_entry","data":{"x":"$.data"}},"cancel_on":[{"aggregate_type":"order","id":"$.key","event_type":"was_placed"}]}}]}}},
 "audit":{"events":{"had_entry":{"schema":{"type":"object"},"handler":[]}}}}}`

// FuzzImplicationExpand: any trigger data and S0 state either expands or is refused with a
// *problem.Error, never a panic; every implied event has object data and metadata with
// implied_by, and the chain stays within the limits.
func FuzzImplicationExpand(f *testing.F) {
	sp, report := spec.Load([]byte(implicationSpec))
	if !report.OK() {
		f.Fatal(report.Err())
	}
	agg, _ := sp.Aggregate("order")
	for _, s := range []struct{ data, state string }{
		{`{"total":12,"name":"x","items":[{"id":"a0000000-0000-4000-a000-000000000001","q":1}]}`, `{"defaults":{"a":1}}`},
		{`{"roles":{"a0000000-0000-4000-a000-000000000002":"editor"},"who":"log"}`, `{}`},
		{`{"items":[{"id":7},{"skip":true}]}`, `[]`},
		{`{"items":"no"}`, `null`},
	} {
		f.Add(s.data, s.state)
	}
	x := implication.Expander{Spec: sp, Rules: ident.NewRules(sp.Singletons()), Limits: implication.DefaultLimits, MaxDataDepth: 100}
	f.Fuzz(func(t *testing.T, data, state string) {
		if _, err := tick.ParseJSON([]byte(data)); err != nil {
			return
		}
		st, err := tick.ParseJSON([]byte(state))
		if err != nil {
			return
		}
		ex := x
		ex.State = func(storage.StreamKey) (tick.Value, error) { return st, nil }
		res, err := ex.Expand([]implication.Trigger{{
			Stream: storage.StreamKey{Type: "order", ID: "a0000000-0000-4000-a000-000000000009"}, Spec: agg.Events["was_placed"],
			Data: []byte(data), Metadata: []byte(`{"actor":{"id":"a0000000-0000-4000-a000-000000000003","type":"user"},"timestamp":1}`), Timestamp: 1,
		}}, false)
		var pe *problem.Error
		if err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("got error %v of type %T, want a *problem.Error", err, err)
			}
			return
		}
		if len(res.Events) > implication.DefaultLimits.MaxTotal {
			t.Fatalf("got %d implied events, over max_total", len(res.Events))
		}
		for _, im := range res.Events {
			v, err := tick.ParseJSON(im.Event.Data)
			if err != nil || v.Kind() != tick.KindObject {
				t.Fatalf("implied data %q is not an object", im.Event.Data)
			}
			m, err := tick.ParseJSON(im.Event.Metadata)
			if err != nil || m.Get("implied_by").Get("depth").Num() != 1 {
				t.Fatalf("implied metadata %q lacks implied_by depth 1", im.Event.Metadata)
			}
		}
	})
}

// FuzzScheduleRecord: any stored bytes decode to a record or ErrCorrupt, never a panic, and a
// decoded record encodes to bytes that decode to the same record.
func FuzzScheduleRecord(f *testing.F) {
	f.Add([]byte(`{"scheduled_id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"e","data":{},"fire_at_ms":1,"implied_by":{"key":"k","event_type":"t","depth":1},"attempts":2,"dead":true}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := schedule.DecodeRecord(raw)
		if err != nil {
			if !errors.Is(err, schedule.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
			return
		}
		again, err := schedule.DecodeRecord(r.Encode())
		if err != nil || string(again.Encode()) != string(r.Encode()) {
			t.Fatalf("round trip changed %s into %s (%v)", r.Encode(), again.Encode(), err)
		}
	})
}
