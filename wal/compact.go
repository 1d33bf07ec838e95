package wal

import (
	"fmt"
)

// Compact rewrites sealed segment seg keeping only the records for which keep returns true,
// crash-safely: the kept records go to a temporary file, which is fsynced and renamed over the
// segment, and then the directory is fsynced. A segment left with no record is removed instead.
// keep sees each payload decompressed, valid only during the call. moved (which may be nil) reports
// the new position of every kept record whose position changed; it is called after the new file is
// durable and visible to readers. After Compact returns, no byte of a dropped
// record remains in any file of the directory.
//
// Reads and scans that started on the old file finish on its bytes (its mapping lives until they
// release it). A position of seg obtained before Compact must be replaced by what moved reports
// before it is read again: the caller serializes its position lookups with Compact.
func (l *Log) Compact(seg uint32, keep func(pos Pos, kind uint8, payload []byte) bool, moved func(old, new Pos)) error {
	l.compactMu.Lock()
	defer l.compactMu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	s := l.acquire(seg)
	if s == nil {
		return fmt.Errorf("%w: no segment %d", ErrNotSealed, seg)
	}
	defer s.release()
	if !s.sealed {
		return fmt.Errorf("%w: segment %d is active", ErrNotSealed, seg)
	}

	type move struct{ old, new Pos }
	var (
		moves   []move
		out     []byte
		dropped int
		scratch []byte
	)
	r := segReader{s: s, limit: s.size, window: readAhead}
	for off := int64(0); off < s.size; {
		f, stored, why, err := r.record(off)
		if err != nil {
			return err
		}
		if why != "" {
			return &CorruptionError{File: s.path, Offset: off, Reason: why}
		}
		payload := stored
		if f.flags&flagS2 != 0 {
			if scratch, err = decompress(scratch[:0], f.flags, stored); err != nil {
				return &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
			}
			payload = scratch
		}
		pos := Pos{Seg: seg, Off: uint32(off)}
		if keep(pos, f.kind, payload) {
			if newOff := int64(len(out)); newOff != off {
				moves = append(moves, move{pos, Pos{Seg: seg, Off: uint32(newOff)}})
			}
			// The checksum leaves the position out, so a kept record moves as its bytes.
			rec, err := r.bytes(off, int(f.size()))
			if err != nil {
				return err
			}
			out = append(out, rec...)
		} else {
			dropped++
		}
		off += f.size()
	}
	if dropped == 0 {
		return nil
	}
	if len(out) == 0 {
		if err := l.removeSegment(s); err != nil {
			return err
		}
	} else if err := l.replaceSegment(s, out); err != nil {
		return err
	}
	if moved != nil {
		for _, m := range moves {
			moved(m.old, m.new)
		}
	}
	l.logger.Info("wal: compacted segment", "seg", seg, "dropped", dropped, "size", len(out))
	return nil
}

// replaceSegment writes content to a temporary file, fsyncs it, renames it over s and fsyncs the
// directory, then swaps the new file into the table.
func (l *Log) replaceSegment(s *segment, content []byte) error {
	tmp := s.path[:len(s.path)-len(segSuffix)] + tmpSuffix
	f, err := l.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", tmp, err)
	}
	abandon := func(err error) error {
		f.Close()
		_ = l.fs.Remove(tmp)
		return err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return abandon(fmt.Errorf("wal: write %s: %w", tmp, err))
	}
	if err := l.syncFile(f); err != nil {
		return abandon(fmt.Errorf("wal: fsync %s: %w", tmp, err))
	}
	if err := l.fs.Rename(tmp, s.path); err != nil {
		return abandon(fmt.Errorf("wal: rename %s: %w", tmp, err))
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		return fmt.Errorf("wal: fsync %s: %w", l.dir, err)
	}
	l.swap(s, newSegment(s.num, s.path, f, true, int64(len(content))))
	return nil
}

func (l *Log) removeSegment(s *segment) error {
	if err := l.fs.Remove(s.path); err != nil {
		return fmt.Errorf("wal: remove %s: %w", s.path, err)
	}
	if err := l.syncDir(); err != nil {
		return fmt.Errorf("wal: fsync %s: %w", l.dir, err)
	}
	l.swap(s, nil)
	return nil
}

// swap replaces s in the table by repl (nil removes it) and drops the table's reference to s.
func (l *Log) swap(s, repl *segment) {
	l.tableMu.Lock()
	l.table.Store(l.table.Load().with(s.num, repl))
	l.tableMu.Unlock()
	s.release()
}
