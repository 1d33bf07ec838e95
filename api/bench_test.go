package api

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"
)

// BenchmarkDataPlane measures the data-plane machinery (routing, authentication, rate limits,
// scope check) in front of a trivial handler, without the network.
func BenchmarkDataPlane(b *testing.B) {
	for _, c := range []struct {
		name   string
		auth   string
		limits bool
	}{
		{"auth=key/limits=on", "key", true},
		{"auth=key/limits=off", "key", false},
		{"auth=operator/limits=on", "operator", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			store, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			op, _ := store.CreateOperator("op@example.com", "pw")
			store.CreateInstance("myapp")
			_, key, _ := store.CreateKey("myapp", "k", control.ScopeWrite, control.EnvProd)
			opts := Options{Control: store, JWTSecret: []byte(strings.Repeat("s", 32))}
			if c.limits {
				opts.RateLimitKey, opts.RateLimitIP = 1<<30, 1<<30
			}
			s, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			s.HandleData("GET", "/:type/:id", func(r *Request) error {
				WriteJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true})
				return nil
			})
			var req fasthttp.Request
			req.SetRequestURI("/user/550e8400-e29b-41d4-a716-446655440000")
			req.Header.SetMethod("GET")
			switch c.auth {
			case "key":
				req.Header.Set("Authorization", "Bearer "+key)
			case "operator":
				tok, _, _ := s.tokens.issue(op)
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("X-J17-Instance", "myapp")
				req.Header.Set("X-J17-Environment", "prod")
			}
			addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var ctx fasthttp.RequestCtx
				ctx.Init(&req, addr, nil)
				s.serve(&ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
		})
	}
}
