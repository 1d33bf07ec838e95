package ident

import "testing"

func BenchmarkNormalize(b *testing.B) {
	r := NewRules([]string{"all", "twilio_webhook", "stripe_webhook"})
	for _, bc := range []struct {
		name, id string
	}{
		{"kind=uuid/case=lower", "a0000000-0000-4000-a000-000000000001"},
		{"kind=uuid/case=upper", "A0000000-0000-4000-A000-000000000001"},
		{"kind=humane/case=canonical", "ABC123XYZ"},
		{"kind=humane/case=lower", "abc123xyz"},
		{"kind=tagged/case=upper", "A0000000-0000-4000-A000-000000000001:2026"},
		{"kind=singleton", "twilio_webhook"},
		{"kind=none", "not_an_identifier"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.id)))
			for b.Loop() {
				_, _, _ = r.Normalize(Key, bc.id)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
		})
	}
}
