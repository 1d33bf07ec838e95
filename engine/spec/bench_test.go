package spec

import (
	"fmt"
	"strings"
	"testing"
)

// benchSpec builds a spec of aggs aggregate types with perAgg event types each: schemas with
// typed, required and nested properties, three-operation handlers with a conditional, an
// implication from each aggregate type to the next (no cycle), a schedule, one saga and one
// projection.
func benchSpec(aggs, perAgg int) []byte {
	var b strings.Builder
	b.WriteString(`{"aggregate_types": {`)
	for a := range aggs {
		if a > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"agg%d": {"events": {`, a)
		for e := range perAgg {
			if e > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"event%d": {
				"schema": {"type": "object", "properties": {
					"name": {"type": "string", "minLength": 1, "maxLength": 100},
					"email": {"type": "string", "format": "email"},
					"amount": {"type": "number", "minimum": 0, "multipleOf": 0.01},
					"status": {"enum": ["active", "pending", "closed"]},
					"address": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["zip"]},
					"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
				}, "required": ["name", "status"], "additionalProperties": false},
				"handler": [
					{"set": {"target": "", "value": "$.data"}},
					{"increment": {"target": "count", "by": 1}},
					{"if": {"equals": ["$.data.status", "closed"]}, "then": [{"set": {"target": "closed_at", "value": "$.metadata.timestamp"}}]}
				]`, e)
			if a+1 < aggs && e == 0 {
				fmt.Fprintf(&b, `, "implications": [
					{"condition": {"gte": ["$.data.amount", 100]}, "emit": {"aggregate_type": "agg%d", "id": "$.metadata.actor.id", "event_type": "event1", "data": {"name": "$.data.name", "status": "pending"}}},
					{"schedule": {"delay": "24h", "emit": {"aggregate_type": "agg%d", "id": "$.key", "event_type": "event2", "data": {"name": "reminder", "status": "pending"}},
						"cancel_on": [{"aggregate_type": "agg%d", "id": "$.key", "event_type": "event3"}]}}
				]`, a+1, a, a)
			}
			b.WriteString("}")
		}
		b.WriteString("}}")
	}
	b.WriteString(`}, "agent_types": ["user", "admin"], "singletons": ["config"],
		"modules": {"never_cache": ["agg0"], "sagas": {"flow": {"trigger": {"aggregate_type": "agg0", "event_type": "event0"},
			"steps": [{"name": "one", "emit": {"aggregate_type": "agg1", "id": "$.key", "event_type": "event0", "data": {"name": "$.data.name", "status": "active"}},
				"await": {"aggregate_type": "agg1", "event_types": ["event1"]}, "timeout_ms": 30000}]}}},
		"projections": {"view": {"for_each": "agg0", "sources": {"main": "$key", "other": {"type": "agg1", "id": "$.main.other_id"}},
			"select": {"name": "$.main.name", "other": "$.other.name"}}}}`)
	return []byte(b.String())
}

// BenchmarkLoad measures Load (parse, validate, compile) of a spec the size of a large
// application: 20 aggregate types and 100 event types.
func BenchmarkLoad(b *testing.B) {
	for _, size := range []struct{ aggs, perAgg int }{{5, 4}, {20, 5}} {
		raw := benchSpec(size.aggs, size.perAgg)
		b.Run(fmt.Sprintf("aggregates=%d/events=%d", size.aggs, size.aggs*size.perAgg), func(b *testing.B) {
			if _, rep := Load(raw); !rep.OK() {
				b.Fatal(formatReport(rep))
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if s, _ := Load(raw); s == nil {
					b.Fatal("spec did not load")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(size.aggs*size.perAgg), "µs/event_type")
		})
	}
}

// BenchmarkCheckCompat measures the compatibility check of a deploy of the same large spec.
func BenchmarkCheckCompat(b *testing.B) {
	raw := benchSpec(20, 5)
	s, rep := Load(raw)
	if !rep.OK() {
		b.Fatal(formatReport(rep))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if issues := CheckCompat(s, s, false, true); len(issues) != 0 {
			b.Fatal(issues)
		}
	}
}
