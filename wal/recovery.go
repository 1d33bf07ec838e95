package wal

import "strconv"

// verifySegment checks every record of a sealed segment. A sealed segment was fsynced whole
// before the next one was created, so any bad record in it is corruption.
func verifySegment(s *segment, size int64) *CorruptionError {
	off, why, err := firstBad(s, size)
	if err != nil {
		return &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
	}
	if why != "" {
		return &CorruptionError{File: s.path, Offset: off, Reason: why}
	}
	return nil
}

// firstBad returns the offset of the first bad record of s, or size and why == "" if there is none.
func firstBad(s *segment, size int64) (off int64, why string, err error) {
	r := segReader{s: s, limit: size, window: readAhead}
	for off < size {
		f, _, why, err := r.record(off)
		if err != nil || why != "" {
			return off, why, err
		}
		off += f.size()
	}
	return size, "", nil
}

// recoverTail returns where the last segment's good records end. Bad bytes there are a torn
// write when no valid record follows them: a crash cut the last write short, and nothing of that
// write was acknowledged. A valid record after bad bytes means the bad ones were once written
// whole and later damaged: that is corruption, and the records after it must not be dropped
// silently.
func recoverTail(s *segment, size int64) (int64, error) {
	off, why, err := firstBad(s, size)
	if err != nil {
		return 0, &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
	}
	if why == "" {
		return size, nil
	}
	r := segReader{s: s, limit: size}
	rest, err := r.bytes(off, int(size-off))
	if err != nil {
		return 0, &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
	}
	if at := validRecordAfter(rest); at > 0 {
		return 0, &CorruptionError{File: s.path, Offset: off, Reason: why + " (a valid record follows at offset " + strconv.FormatInt(off+int64(at), 10) + ")"}
	}
	return off, nil
}

// validRecordAfter returns the offset in b (after 0) of the first valid record, or 0 if none.
func validRecordAfter(b []byte) int {
	for i := 1; i+headerSize <= len(b); i++ {
		if validAt(b[i:]) {
			return i
		}
	}
	return 0
}
