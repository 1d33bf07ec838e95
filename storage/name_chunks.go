package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// A run of the names bucket (name_runs.go) holds its names in chunks: each key of the run's
// bucket is the first name of a chunk, and its value the chunk, names in key order:
//
//	count 2B BE | offset of each name from the end of the offsets, 2B BE each |
//	names: key length (uvarint) | key (type 0 id) | stream number 8B BE
//
// A name joins the chunk being written while the chunk stays within chunkMax bytes; a name longer
// than that gets a chunk of its own, so every offset but the first is below chunkMax and fits in
// two bytes. A lookup seeks the chunk that may hold the name and searches it by its offsets.
//
// A put per chunk instead of a put per name (format 5) is what makes merges cheap: bbolt's Put was
// four fifths of a merge's processor time, and merges an eighth of the server's in bench/'s order
// scenario (ten new streams an order). BenchmarkNamesMerge, two alternated runs of each: 8.9 and
// 8.6 s of merging against 2.2 and 2.2 s, 72 against 61 index bytes a name, a lookup 3.0 and 2.2
// against 3.2 and 2.7 µs. A chunk of at most 1,900 bytes lets two share a 4 KiB page.
const chunkMax = 1900

// nameChunk is a parsed chunk: its offsets and the names they point into.
type nameChunk struct {
	offs, body []byte
	n          int
}

// parseChunk checks a chunk's header; the names themselves are checked as they are read.
func parseChunk(v []byte) (nameChunk, error) {
	if len(v) < 2 {
		return nameChunk{}, fmt.Errorf("%w: names chunk of %d bytes", ErrIndexMismatch, len(v))
	}
	n := int(binary.BigEndian.Uint16(v))
	if n == 0 || len(v) < 2+2*n {
		return nameChunk{}, fmt.Errorf("%w: names chunk of %d names in %d bytes", ErrIndexMismatch, n, len(v))
	}
	return nameChunk{offs: v[2 : 2+2*n], body: v[2+2*n:], n: n}, nil
}

// at returns the chunk's i-th name and stream number.
func (c nameChunk) at(i int) (key []byte, no uint64, err error) {
	off := int(binary.BigEndian.Uint16(c.offs[2*i:]))
	if off >= len(c.body) {
		return nil, 0, fmt.Errorf("%w: names chunk offset %d past its %d bytes", ErrIndexMismatch, off, len(c.body))
	}
	b := c.body[off:]
	l, w := binary.Uvarint(b)
	if w <= 0 || l == 0 || l > uint64(len(b)-w) || uint64(len(b)-w)-l < 8 {
		return nil, 0, fmt.Errorf("%w: bad name in names chunk", ErrIndexMismatch)
	}
	key = b[w : w+int(l)]
	return key, binary.BigEndian.Uint64(b[w+int(l):]), nil
}

// lowerBound returns the index of the chunk's first name not below key, c.n if there is none.
func (c nameChunk) lowerBound(key []byte) (int, error) {
	var err error
	i := sort.Search(c.n, func(i int) bool {
		k, _, e := c.at(i)
		if e != nil {
			err = e
			return true
		}
		return bytes.Compare(k, key) >= 0
	})
	return i, err
}

// chunkWriter puts names, added in key order, into a run as chunks.
type chunkWriter struct {
	run   *bolt.Bucket
	alloc func(int) []byte
	offs  []uint16
	body  []byte
}

func (w *chunkWriter) add(key []byte, no uint64) error {
	size := binary.MaxVarintLen16 + len(key) + 8
	if len(w.offs) > 0 && 2+2*(len(w.offs)+1)+len(w.body)+size > chunkMax {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.offs = append(w.offs, uint16(len(w.body)))
	w.body = binary.AppendUvarint(w.body, uint64(len(key)))
	w.body = append(w.body, key...)
	w.body = binary.BigEndian.AppendUint64(w.body, no)
	return nil
}

// flush puts the chunk being written, if it has a name, keyed by its first name.
func (w *chunkWriter) flush() error {
	if len(w.offs) == 0 {
		return nil
	}
	v := appendChunk(w.alloc(2+2*len(w.offs)+len(w.body)), w.offs, w.body)
	c, err := parseChunk(v)
	if err != nil {
		return err
	}
	first, _, err := c.at(0)
	if err != nil {
		return err
	}
	w.offs, w.body = w.offs[:0], w.body[:0]
	return w.run.Put(first, v)
}

// appendChunk appends to dst the chunk of the names in body, which begin at offs.
func appendChunk(dst []byte, offs []uint16, body []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(offs)))
	for _, o := range offs {
		dst = binary.BigEndian.AppendUint16(dst, o)
	}
	return append(dst, body...)
}

// runCursor walks a run's names in key order. The keys it returns are valid while the
// transaction is open. A chunk whose first name is not its key is an error, like any other
// unreadable chunk.
type runCursor struct {
	c     *bolt.Cursor
	chunk nameChunk
	i     int
}

func newRunCursor(run *bolt.Bucket) *runCursor { return &runCursor{c: run.Cursor()} }

// load makes the chunk v, keyed k, the current one, at its name i; a nil k ends the walk.
func (r *runCursor) load(k, v []byte, i int) ([]byte, uint64, error) {
	if k == nil {
		r.chunk = nameChunk{}
		return nil, 0, nil
	}
	var err error
	if r.chunk, err = parseChunk(v); err != nil {
		return nil, 0, err
	}
	first, _, err := r.chunk.at(0)
	if err != nil {
		return nil, 0, err
	}
	if !bytes.Equal(first, k) {
		return nil, 0, fmt.Errorf("%w: names chunk %q begins with %q", ErrIndexMismatch, k, first)
	}
	r.i = i
	return r.chunk.at(i)
}

// first returns the run's first name, nil if it has none.
func (r *runCursor) first() ([]byte, uint64, error) {
	k, v := r.c.First()
	return r.load(k, v, 0)
}

// next returns the name after the last one returned, nil after the last.
func (r *runCursor) next() ([]byte, uint64, error) {
	if r.i+1 < r.chunk.n {
		r.i++
		return r.chunk.at(r.i)
	}
	k, v := r.c.Next()
	return r.load(k, v, 0)
}

// seek returns the run's first name not below key, nil if there is none.
func (r *runCursor) seek(key []byte) ([]byte, uint64, error) {
	k, v := r.c.Seek(key)
	if k != nil && bytes.Equal(k, key) {
		return r.load(k, v, 0)
	}
	// The chunk before the one found may hold the name or the names after it.
	var pk, pv []byte
	if k == nil {
		pk, pv = r.c.Last()
	} else {
		pk, pv = r.c.Prev()
	}
	if pk == nil {
		k, v = r.c.First()
		return r.load(k, v, 0)
	}
	if _, _, err := r.load(pk, pv, 0); err != nil {
		return nil, 0, err
	}
	i, err := r.chunk.lowerBound(key)
	if err != nil {
		return nil, 0, err
	}
	if i < r.chunk.n {
		r.i = i
		return r.chunk.at(i)
	}
	k, v = r.c.Seek(key)
	return r.load(k, v, 0)
}
