package control

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkResolveKey measures the key lookup every data-plane request makes.
func BenchmarkResolveKey(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "control.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CreateInstance("myapp"); err != nil {
				b.Fatal(err)
			}
			var secret string
			for i := 0; i < n; i++ {
				_, sec, err := s.CreateKey("myapp", "k", ScopeRead, EnvProd)
				if err != nil {
					b.Fatal(err)
				}
				secret = sec
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, _, err := s.ResolveKey(secret); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "lookups/s")
		})
	}
}
