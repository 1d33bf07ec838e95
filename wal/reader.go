package wal

import (
	"fmt"
	"io"
	"slices"
)

// readAhead is the window a reader of an unmapped segment fills per read, so that a scan costs
// one system call per window rather than per record.
const readAhead = 1 << 20

// segReader reads the records of one segment up to limit. A mapped segment is read in place;
// otherwise through a window buffer refilled with large reads.
type segReader struct {
	s      *segment
	limit  int64
	window int // bytes to read ahead; 0 reads exactly what is asked
	buf    []byte
	bufOff int64
}

// bytes returns the n bytes at off. The slice is valid until the next call.
func (r *segReader) bytes(off int64, n int) ([]byte, error) {
	if r.s.data != nil {
		return r.s.data[off : off+int64(n)], nil
	}
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		return r.buf[off-r.bufOff : off-r.bufOff+int64(n)], nil
	}
	want := int64(max(n, r.window))
	want = min(want, r.limit-off)
	r.buf = slices.Grow(r.buf[:0], int(want))[:want]
	if _, err := r.s.f.ReadAt(r.buf, off); err != nil && err != io.EOF {
		r.buf = r.buf[:0]
		return nil, fmt.Errorf("wal: read %s at %d: %w", r.s.path, off, err)
	}
	r.bufOff = off
	return r.buf[:n], nil
}

// record returns the record at off. why is non-empty when the bytes there are not a valid record.
func (r *segReader) record(off int64) (f frame, stored []byte, why string, err error) {
	avail := r.limit - off
	hb, err := r.bytes(off, int(min(avail, headerSize)))
	if err != nil {
		return f, nil, "", err
	}
	f, why = decodeHeader(hb, avail)
	if why != "" {
		return f, nil, why, nil
	}
	rec, err := r.bytes(off, int(f.size()))
	if err != nil {
		return f, nil, "", err
	}
	if why := checkRecord(f, rec[:headerSize], rec[headerSize:]); why != "" {
		return f, nil, why, nil
	}
	return f, rec[headerSize:], "", nil
}

// limitOf returns how many bytes of s a reader may read, given the durable end.
func limitOf(s *segment, end Pos) int64 {
	switch {
	case s.num > end.Seg:
		return 0
	case s.num == end.Seg && s.sealed:
		return min(s.size, int64(end.Off))
	case s.num == end.Seg:
		return int64(end.Off)
	case s.sealed:
		return s.size
	default:
		return 0
	}
}

// acquire returns segment n with a reader's reference held, or nil if there is none.
func (l *Log) acquire(n uint32) *segment {
	for {
		s := l.table.Load().find(n)
		if s == nil || s.acquire() {
			return s
		}
	}
}

// Read returns one durable record, its payload decompressed into a new slice the caller owns.
func (l *Log) Read(pos Pos) (kind uint8, payload []byte, err error) {
	if l.closed.Load() {
		return 0, nil, ErrClosed
	}
	end := l.End()
	if !pos.Less(end) {
		return 0, nil, fmt.Errorf("%w: %v is at or past the end %v", ErrNotFound, pos, end)
	}
	s := l.acquire(pos.Seg)
	if s == nil {
		if l.closed.Load() {
			return 0, nil, ErrClosed
		}
		return 0, nil, fmt.Errorf("%w: no segment %d", ErrNotFound, pos.Seg)
	}
	defer s.release()
	r := segReader{s: s, limit: limitOf(s, end)}
	if int64(pos.Off) >= r.limit {
		return 0, nil, fmt.Errorf("%w: %v is past the end of its segment", ErrNotFound, pos)
	}
	f, stored, why, err := r.record(int64(pos.Off))
	if err != nil {
		return 0, nil, err
	}
	if why != "" {
		return 0, nil, &CorruptionError{File: s.path, Offset: int64(pos.Off), Reason: why}
	}
	payload, err = decompress(nil, f.flags, stored)
	if err != nil {
		return 0, nil, &CorruptionError{File: s.path, Offset: int64(pos.Off), Reason: err.Error()}
	}
	return f.kind, payload, nil
}

// Scan calls fn for every durable record at or after from, in log order, up to End() as of the
// call. payload is valid only during fn, and fn must not modify it (it may be the mapped file).
// An error from fn stops the scan and is returned.
func (l *Log) Scan(from Pos, fn func(pos Pos, kind uint8, payload []byte) error) error {
	if l.closed.Load() {
		return ErrClosed
	}
	end := l.End()
	var nums []uint32
	for _, s := range l.table.Load().segs {
		if s.num >= from.Seg && s.num <= end.Seg {
			nums = append(nums, s.num)
		}
	}
	var scratch []byte
	for _, n := range nums {
		s := l.acquire(n)
		if s == nil {
			if l.closed.Load() {
				return ErrClosed
			}
			continue // emptied and removed by Compact
		}
		off := int64(0)
		if n == from.Seg {
			off = int64(from.Off)
		}
		err := scanSegment(s, off, limitOf(s, end), &scratch, fn)
		s.release()
		if err != nil {
			return err
		}
	}
	return nil
}

func scanSegment(s *segment, off, limit int64, scratch *[]byte, fn func(Pos, uint8, []byte) error) error {
	r := segReader{s: s, limit: limit, window: readAhead}
	for off < limit {
		f, stored, why, err := r.record(off)
		if err != nil {
			return err
		}
		if why != "" {
			return &CorruptionError{File: s.path, Offset: off, Reason: why}
		}
		payload := stored
		if f.flags&flagS2 != 0 {
			if *scratch, err = decompress((*scratch)[:0], f.flags, stored); err != nil {
				return &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
			}
			payload = *scratch
		}
		if err := fn(Pos{Seg: s.num, Off: uint32(off)}, f.kind, payload); err != nil {
			return err
		}
		off += f.size()
	}
	return nil
}
