package wal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppend measures durable appends (each returns after its fsync) of ~300-byte
// event-shaped payloads with concurrent appenders sharing group commits.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("writers=%d/size=300", writers), func(b *testing.B) {
			benchAppend(b, writers, Options{})
		})
	}
}

func benchAppend(b *testing.B, writers int, opts Options) {
	l, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	payload := benchEvents(300, 1)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	lat := make([][]time.Duration, writers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		n := b.N / writers
		if w < b.N%writers {
			n++
		}
		lat[w] = make([]time.Duration, 0, n)
		wg.Go(func() {
			for range n {
				t0 := time.Now()
				if _, err := l.Append(1, payload); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(len(all))/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		st := l.Stats()
		b.ReportMetric(float64(st.Records)/float64(max(st.Groups, 1)), "records/fsync")
	}
}

// BenchmarkScan measures a sequential scan of sealed segments.
func BenchmarkScan(b *testing.B) {
	for _, c := range benchDiskCases {
		b.Run(fmt.Sprintf("compress=%s/size=%d", c.name, c.size), func(b *testing.B) {
			threshold, size := c.threshold, c.size
			dir := b.TempDir()
			l, err := Open(dir, Options{NoSync: true, SegmentSize: 4 << 20, CompressThreshold: threshold})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			records := 30_000_000 / size
			payloads := benchPayloads(size)
			for i := range records {
				l.Write(1, payloads[i%len(payloads)])
			}
			if err := l.Rotate(); err != nil {
				b.Fatal(err)
			}
			var payloadBytes int64
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				payloadBytes, n = 0, 0
				if err := l.Scan(Pos{}, func(_ Pos, _ uint8, p []byte) error {
					payloadBytes += int64(len(p))
					n++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(payloadBytes)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// benchDiskCases are a one-event record (300 bytes, under the default threshold) and a batch of
// about eight events (2 KiB), with compression off and at the default threshold.
var benchDiskCases = []struct {
	name      string
	threshold int
	size      int
}{
	{"off", -1, 300}, {"on", 0, 300}, {"off", -1, 2048}, {"on", 0, 2048},
}

// BenchmarkDiskBytes reports the bytes on disk per record, header included, with and without
// compression.
func BenchmarkDiskBytes(b *testing.B) {
	for _, c := range benchDiskCases {
		b.Run(fmt.Sprintf("compress=%s/size=%d", c.name, c.size), func(b *testing.B) {
			threshold, size := c.threshold, c.size
			dir := b.TempDir()
			l, err := Open(dir, Options{NoSync: true, CompressThreshold: threshold})
			if err != nil {
				b.Fatal(err)
			}
			payloads := benchPayloads(size)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				l.Write(1, payloads[i%len(payloads)])
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			var total int64
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				st, err := os.Stat(filepath.Join(dir, e.Name()))
				if err != nil {
					b.Fatal(err)
				}
				total += st.Size()
			}
			b.ReportMetric(float64(total)/float64(b.N), "disk-bytes/record")
		})
	}
}

// BenchmarkAppendNoSync is BenchmarkAppend without the fsync: the processor cost of the append
// path and the group commit, apart from the disk.
func BenchmarkAppendNoSync(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d/size=300", writers), func(b *testing.B) {
			benchAppend(b, writers, Options{NoSync: true})
		})
	}
}

// benchPayloads returns distinct event-shaped payloads of the given size.
func benchPayloads(size int) [][]byte {
	out := make([][]byte, 256)
	for i := range out {
		out[i] = benchEvents(size, uint64(i))
	}
	return out
}
