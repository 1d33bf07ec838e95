package wal

import (
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
)

// DefaultCompressThreshold is the payload length from which payloads are compressed when
// Options.CompressThreshold is 0. doc.go gives the measurements behind it.
const DefaultCompressThreshold = 512

// scratchPool holds buffers for compressed payloads, so that Write does not allocate per record.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// compress returns the S2 block form of p in a buffer from scratchPool, or ok=false when it
// would not be smaller than p. The caller hands buf to putScratch.
func compress(p []byte) (buf *[]byte, out []byte, ok bool) {
	buf = scratchPool.Get().(*[]byte)
	n := s2.MaxEncodedLen(len(p))
	if n < 0 {
		return buf, nil, false
	}
	*buf = slices.Grow((*buf)[:0], n)
	out = s2.Encode((*buf)[:n], p)
	return buf, out, len(out) < len(p)
}

// putScratch returns a buffer to scratchPool unless a huge payload made it too big to keep.
func putScratch(buf *[]byte) {
	if cap(*buf) <= maxSpare {
		scratchPool.Put(buf)
	}
}

// decompress appends the payload stored as stored with flags to dst.
func decompress(dst []byte, flags uint8, stored []byte) ([]byte, error) {
	if flags&flagS2 == 0 {
		return append(dst, stored...), nil
	}
	n, err := s2.DecodedLen(stored)
	if err != nil {
		return dst, fmt.Errorf("decompress: %w", err)
	}
	if n > MaxPayload {
		return dst, fmt.Errorf("decompress: payload of %d bytes is over the limit", n)
	}
	dst = slices.Grow(dst, n)
	out, err := s2.Decode(dst[len(dst):len(dst)+n], stored)
	if err != nil {
		return dst, fmt.Errorf("decompress: %w", err)
	}
	return dst[:len(dst)+len(out)], nil
}
