package wal

import (
	"bytes"
	"fmt"
)

// Preallocation. The active segment is zero-filled (real writes, not fallocate) ahead of the
// writer, so that most group writes overwrite blocks that are already allocated and synced and
// their fdatasync does not have to commit a change of size or extents. Sealing and Close trim a
// segment back to its records. doc.go has the measurements and the recovery rules.

// preallocAlign is the granularity of a preallocated end. A sealed segment whose records stop
// before an all-zero run to the end of the file is taken for one whose trim a crash interrupted
// only when its size is a multiple of this, which the size of a trimmed segment rarely is.
const preallocAlign = 4096

// zeroPage is written to fill, and compared against to recognize, preallocated space.
var zeroPage [64 << 10]byte

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeroPage))
		if !bytes.Equal(b[:n], zeroPage[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// lastNonZero returns the index of the last non-zero byte of b, or -1 if there is none.
func lastNonZero(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// preallocTarget returns the size to zero-fill the active segment to so that a write ending at
// need fits: a chunk ahead of need, aligned, and no further than the segment may grow unless one
// record alone is larger.
func (l *Log) preallocTarget(need int64) int64 {
	target := min(need+l.prealloc, max(need, l.segSize))
	return (target + preallocAlign - 1) / preallocAlign * preallocAlign
}

// extendActive zero-fills the active segment from its allocated end to target. The zeros reach
// the disk with the next fsync, together with the group that needed them.
func (l *Log) extendActive(target int64) error {
	for l.allocEnd < target {
		n := min(target-l.allocEnd, int64(len(zeroPage)))
		if _, err := l.active.f.WriteAt(zeroPage[:n], l.allocEnd); err != nil {
			return fmt.Errorf("wal: preallocate %s: %w", l.active.path, err)
		}
		l.allocEnd += n
	}
	return nil
}

// trimActive cuts the active segment's preallocated tail and makes the new size durable.
func (l *Log) trimActive() error {
	if l.allocEnd <= l.activeSize {
		return nil
	}
	if err := l.active.f.Truncate(l.activeSize); err != nil {
		return fmt.Errorf("wal: trim %s: %w", l.active.path, err)
	}
	if err := l.syncFile(l.active.f); err != nil {
		return fmt.Errorf("wal: fsync %s: %w", l.active.path, err)
	}
	l.allocEnd = l.activeSize
	return nil
}

// untrimmedTail reports whether the bytes of s from off (where its records stop) to size are the
// preallocated tail of a sealed segment whose trim a crash interrupted: all zero, up to an aligned
// size. Anything else after the last record of a sealed segment is corruption.
func untrimmedTail(s *segment, off, size int64) (bool, error) {
	if size%preallocAlign != 0 {
		return false, nil
	}
	r := segReader{s: s, limit: size}
	rest, err := r.bytes(off, int(size-off))
	if err != nil {
		return false, err
	}
	return allZero(rest), nil
}
