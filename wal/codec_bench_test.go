package wal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// benchEvents returns the first n bytes of JSON shaped like the records the storage layer writes:
// events with ids, types, timestamps, actors and small data objects (about 250 bytes each).
func benchEvents(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	types := []string{"was_placed", "had_item_added", "was_paid", "was_shipped", "was_cancelled"}
	var b bytes.Buffer
	b.WriteString(`{"events":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"key":"order:%08x-%04x-4%03x-a%03x-%012x","type":%q,"id":"%d-%d",`+
			`"data":{"items":[{"sku":"WIDGET-%d","quantity":%d}],"total":%d.%02d},`+
			`"metadata":{"actor":{"type":"user","id":"%08x-%04x-4%03x-a%03x-%012x"}}}`,
			r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff,
			types[r.IntN(len(types))], 1705312800000+r.IntN(1e6), r.IntN(4),
			r.IntN(100), 1+r.IntN(9), r.IntN(500), r.IntN(100),
			r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)
	}
	b.WriteString(`]}`)
	return b.Bytes()[:n]
}

// BenchmarkCodec measures the candidate codecs on event-shaped payloads; doc.go records the
// figures that chose the codec and the default threshold.
func BenchmarkCodec(b *testing.B) {
	fastest, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	dflt, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	dec, _ := zstd.NewReader(nil)
	codecs := []struct {
		name string
		enc  func(dst, p []byte) []byte
		dec  func(dst, p []byte) ([]byte, error)
	}{
		{"zstd-fastest", func(d, p []byte) []byte { return fastest.EncodeAll(p, d[:0]) }, func(d, p []byte) ([]byte, error) { return dec.DecodeAll(p, d[:0]) }},
		{"zstd-default", func(d, p []byte) []byte { return dflt.EncodeAll(p, d[:0]) }, func(d, p []byte) ([]byte, error) { return dec.DecodeAll(p, d[:0]) }},
		{"s2", func(d, p []byte) []byte { return s2.Encode(d[:cap(d)], p) }, func(d, p []byte) ([]byte, error) { return s2.Decode(d[:cap(d)], p) }},
		{"s2-better", func(d, p []byte) []byte { return s2.EncodeBetter(d[:cap(d)], p) }, func(d, p []byte) ([]byte, error) { return s2.Decode(d[:cap(d)], p) }},
	}
	for _, size := range []int{300, 512, 1024, 4096, 65536} {
		p := benchEvents(size, uint64(size))
		for _, c := range codecs {
			b.Run(fmt.Sprintf("codec=%s/size=%d/op=encode", c.name, size), func(b *testing.B) {
				dst := make([]byte, 0, 2*len(p)+64)
				var n int
				b.SetBytes(int64(len(p)))
				b.ReportAllocs()
				for b.Loop() {
					n = len(c.enc(dst, p))
				}
				b.ReportMetric(float64(n)/float64(len(p)), "ratio")
			})
			b.Run(fmt.Sprintf("codec=%s/size=%d/op=decode", c.name, size), func(b *testing.B) {
				z := append([]byte(nil), c.enc(make([]byte, 0, 2*len(p)+64), p)...)
				dst := make([]byte, 0, len(p)+64)
				b.SetBytes(int64(len(p)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.dec(dst, z); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
