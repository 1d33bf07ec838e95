package wal

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

const (
	segSuffix = ".seg"
	// tmpSuffix marks the files compaction writes before renaming them over a segment. Open removes
	// any left by a crash.
	tmpSuffix = ".seg.tmp"
)

func segName(n uint32) string { return fmt.Sprintf("%08d%s", n, segSuffix) }

// parseSegName returns the number of a segment file name, or ok=false for any other name.
func parseSegName(name string) (n uint32, ok bool) {
	digits, found := strings.CutSuffix(name, segSuffix)
	if !found || len(digits) != 8 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(v), true
}

// segment is one segment file as readers see it. A sealed segment is immutable: its bytes are
// mapped (data) or read through f. The active segment is read through f up to the durable end.
//
// A segment is reference counted: the table holds one reference and every reader one more while
// it reads. When a segment leaves the table (sealing, compaction, Close) the table's reference is
// dropped, and the last reader unmaps and closes it, so a reader always finishes on the bytes it
// started on.
type segment struct {
	num    uint32
	path   string
	sealed bool
	size   int64  // sealed segments only
	data   []byte // sealed segments on a filesystem that maps files; nil otherwise
	f      File
	unmap  func([]byte) error
	refs   atomic.Int32
}

func newSegment(num uint32, path string, f File, sealed bool, size int64) *segment {
	s := &segment{num: num, path: path, f: f, sealed: sealed, size: size}
	s.refs.Store(1)
	if sealed && size > 0 {
		if m, ok := f.(mapper); ok {
			if data, err := m.mmap(int(size)); err == nil {
				s.data, s.unmap = data, m.munmap
			}
		}
	}
	return s
}

// acquire takes a reader's reference, or fails if the segment has already been let go.
func (s *segment) acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

func (s *segment) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.data != nil {
		_ = s.unmap(s.data)
		s.data = nil
	}
	_ = s.f.Close()
}

// mapper is implemented by files that can be mapped into memory read-only.
type mapper interface {
	mmap(size int) ([]byte, error)
	munmap([]byte) error
}

// segTable is an immutable snapshot of the segments, sorted by number. Writers replace it whole.
type segTable struct {
	segs []*segment
}

func (t *segTable) find(n uint32) *segment {
	lo, hi := 0, len(t.segs)
	for lo < hi {
		m := (lo + hi) / 2
		if t.segs[m].num < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t.segs) && t.segs[lo].num == n {
		return t.segs[lo]
	}
	return nil
}

// with returns a copy of t in which s takes the place of the segment of the same number (or is
// added); s == nil with num removes it.
func (t *segTable) with(num uint32, s *segment) *segTable {
	out := &segTable{segs: make([]*segment, 0, len(t.segs)+1)}
	added := false
	for _, old := range t.segs {
		if old.num == num {
			continue
		}
		if s != nil && !added && old.num > num {
			out.segs = append(out.segs, s)
			added = true
		}
		out.segs = append(out.segs, old)
	}
	if s != nil && !added {
		out.segs = append(out.segs, s)
	}
	return out
}

func segPath(dir string, n uint32) string { return filepath.Join(dir, segName(n)) }
