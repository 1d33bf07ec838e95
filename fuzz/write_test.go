package fuzz

import (
	"errors"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/tick"
)

const writeSpec = `{"singletons":["all"],"agent_types":["user"],"target_types":["order"],"aggregate_types":{"user":{"events":{
  "was_created":{"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"handler":[{"set":{"target":"","value":"$.data"}}]},
  "was_seen":{"allow_skip_occ":true,"schema":{"type":"object"},"handler":[]}}}}}`

// FuzzWritePrepare: any body, id and event type is either a plan or a *problem.Error, never a
// panic; and the data of every plan is accepted by the store and parses back within the replay
// parser's limits.
func FuzzWritePrepare(f *testing.F) {
	sp, report := spec.Load([]byte(writeSpec))
	if !report.OK() {
		f.Fatal(report.Err())
	}
	rules := ident.NewRules(sp.Singletons())
	seeds := []struct{ id, event, body string }{
		{"global", "was_created", `{"data":{"name":"a"},"metadata":{"actor":{"type":"user","id":"all"}}}`},
		{"a0000000-0000-4000-a000-000000000001", "was_seen", `{"data":{},"metadata":{"actor":{"type":"user","id":"all"},"skip_occ":true,"timestamp":5}}`},
		{"ABC123XYZ", "", `{"events":[{"type":"was_seen"},{"type":"was_created","data":{"name":"x"}}],"metadata":{"actor":{"type":"system_agent","id":"event_scheduler"},"previous_length":0}}`},
		{"x", "was_created", `{"data":[[[[[]]]]],"metadata":{"actor":{"type":"user","id":"all"},"target":{"type":"order","id":"a0000000-0000-4000-a000-000000000001:2026"}}}`},
		{"global", "_x", `{`},
	}
	for _, s := range seeds {
		f.Add(s.id, s.event, []byte(s.body), false)
	}
	f.Fuzz(func(t *testing.T, id, event string, body []byte, prod bool) {
		p, err := write.Prepare(sp, rules, write.Input{AggregateType: "user", ID: id, EventType: event, Body: body, Now: time.Unix(1, 0), Prod: prod})
		if err != nil {
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("refusal is %T %v, want a *problem.Error", err, err)
			}
			return
		}
		for _, ev := range p.Events {
			if _, err := tick.ParseJSON(ev.Data); err != nil {
				t.Fatalf("accepted data %q does not parse for replay: %v", ev.Data, err)
			}
			if _, err := canonical.Canonicalize(ev.Data); err != nil {
				t.Fatalf("accepted data %q is refused by the store: %v", ev.Data, err)
			}
			if _, err := tick.ParseJSON(ev.Metadata); err != nil {
				t.Fatalf("built metadata %q does not parse: %v", ev.Metadata, err)
			}
		}
	})
}
