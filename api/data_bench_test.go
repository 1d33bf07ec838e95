package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"golang.org/x/crypto/bcrypt"
)

// BenchmarkHTTPWrite posts single validated events, each to a fresh aggregate, over keep-alive
// connections, with fsync on.
func BenchmarkHTTPWrite(b *testing.B) {
	for _, conns := range []int{1, 64} {
		b.Run(fmt.Sprintf("conns=%d/fsync=true", conns), func(b *testing.B) {
			ds := startBenchServer(b)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
			body := []byte(`{"data":{"name":"Alice","email":"alice@example.com"},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`)
			var next atomic.Int64
			lat := make([][]time.Duration, conns)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for c := 0; c < conns; c++ {
				n := b.N / conns
				if c == 0 {
					n += b.N % conns
				}
				wg.Add(1)
				go func(c, n int) {
					defer wg.Done()
					for i := 0; i < n; i++ {
						url := fmt.Sprintf("%s/user/b0000000-0000-4000-a000-%012d/was_created", ds.base, next.Add(1))
						start := time.Now()
						status := benchPost(client, url, ds.key, body)
						lat[c] = append(lat[c], time.Since(start))
						if status != 201 {
							b.Errorf("status %d", status)
							return
						}
					}
				}(c, n)
			}
			wg.Wait()
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkHTTPCachedRead reads one cached aggregate over one keep-alive connection.
func BenchmarkHTTPCachedRead(b *testing.B) {
	ds := startBenchServer(b)
	body := []byte(`{"data":{"name":"Alice","email":"alice@example.com"},"metadata":{"actor":{"type":"user","id":"` + userA + `"}}}`)
	client := &http.Client{}
	if s := benchPost(client, ds.base+"/user/"+userB+"/was_created", ds.key, body); s != 201 {
		b.Fatalf("status %d", s)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		req, _ := http.NewRequest("GET", ds.base+"/user/"+userB, nil)
		req.Header.Set("Authorization", "Bearer "+ds.key)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func benchPost(c *http.Client, url, key string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// benchServer is a data server for benchmarks, set up through the stores rather than HTTP.
type benchServer struct{ base, key string }

func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	dir := b.TempDir()
	store, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost})
	if err != nil {
		b.Fatal(err)
	}
	inst, err := store.CreateInstance("bench")
	if err != nil {
		b.Fatal(err)
	}
	spec, err := os.ReadFile(filepath.Join("testdata", "data_spec.json"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.DeploySpec(inst.ID, control.EnvStaging, "", func(*control.SpecVersion) ([]byte, error) { return spec, nil }); err != nil {
		b.Fatal(err)
	}
	_, key, err := store.CreateKey(inst.ID, "w", control.ScopeWrite, control.EnvStaging)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{DataDir: dir, Control: store, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Control: store, Engine: eng, JWTSecret: bytes.Repeat([]byte("k"), 32), DataDir: dir, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	b.Cleanup(func() {
		_ = srv.Shutdown(context.Background())
		<-done
		_ = eng.Close()
		_ = store.Close()
	})
	return &benchServer{base: "http://" + ln.Addr().String(), key: key}
}
