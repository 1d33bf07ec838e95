package schema

import (
	"strconv"
	"testing"
)

// benchSchema is a typical event schema: eight properties, two formats, required, enum and
// numeric and length bounds.
const benchSchema = `{
  "type": "object",
  "properties": {
    "email":      {"type": "string", "format": "email"},
    "name":       {"type": "string", "minLength": 1, "maxLength": 100},
    "age":        {"type": "integer", "minimum": 0, "maximum": 150},
    "status":     {"type": "string", "enum": ["active", "pending", "closed"]},
    "created_at": {"type": "string", "format": "date-time"},
    "total":      {"type": "number", "minimum": 0, "maximum": 1000000},
    "tags":       {"type": "array", "items": {"type": "string"}, "maxItems": 10},
    "note":       {"type": "string", "maxLength": 500}
  },
  "required": ["email", "name", "status"],
  "additionalProperties": false
}`

// benchEvent is a ~300-byte event that satisfies benchSchema.
const benchEvent = `{"email":"alice.smith@example.com","name":"Alice Smith","age":34,"status":"active","created_at":"2024-01-15T10:30:00Z","total":129.99,"tags":["vip","newsletter","beta"],"note":"Signed up through the spring campaign landing page after a referral from a colleague in the sales team."}`

func BenchmarkValidate(b *testing.B) {
	s, issues := Compile([]byte(benchSchema))
	if issues != nil {
		b.Fatal(issues)
	}
	data, err := decodeJSON([]byte(benchEvent))
	if err != nil {
		b.Fatal(err)
	}
	size := "size=" + strconv.Itoa(len(benchEvent))
	b.Run("input=decoded/"+size, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchEvent)))
		for b.Loop() {
			if err := s.Validate(data); err != nil {
				b.Fatal(err)
			}
		}
		reportEventRate(b)
	})
	b.Run("input=json/"+size, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchEvent)))
		raw := []byte(benchEvent)
		for b.Loop() {
			if err := s.ValidateJSON(raw); err != nil {
				b.Fatal(err)
			}
		}
		reportEventRate(b)
	})
}

func reportEventRate(b *testing.B) {
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perEvent, "ns/event")
	b.ReportMetric(1e9/perEvent, "events/s")
}
