package wal

import "strconv"

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

// recoverTail returns where the last segment's good records end, and whether every byte after
// that is zero. An all-zero rest is preallocated space not yet written: the normal end of the log,
// kept for the writer. Other bad bytes there are a torn write when no valid record follows them:
// a crash cut the last write short, and nothing of that write was acknowledged. A valid record
// after bad bytes (zeros included) means the bad ones were once written whole and later damaged,
// or a later page of the last write reached the disk before an earlier one: that is corruption,
// and the records after it must not be dropped silently.
func recoverTail(s *segment, size int64) (end int64, zeros bool, err error) {
	off, why, err := firstBad(s, size)
	if err != nil {
		return 0, false, &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
	}
	if why == "" {
		return size, true, nil
	}
	r := segReader{s: s, limit: size}
	rest, err := r.bytes(off, int(size-off))
	if err != nil {
		return 0, false, &CorruptionError{File: s.path, Offset: off, Reason: err.Error()}
	}
	if at := validRecordAfter(rest); at > 0 {
		return 0, false, &CorruptionError{File: s.path, Offset: off, Reason: why + " (a valid record follows at offset " + strconv.FormatInt(off+int64(at), 10) + ")"}
	}
	return off, allZero(rest), nil
}

// validRecordAfter returns the offset in b (after 0) of the first valid record, or 0 if none.
// A valid record's header is never all zero (the CRC-32C of a zero length, kind and flags is not
// zero), so no record can start after the last non-zero byte.
func validRecordAfter(b []byte) int {
	last := lastNonZero(b)
	for i := 1; i <= last && i+headerSize <= len(b); i++ {
		if validAt(b[i:]) {
			return i
		}
	}
	return 0
}
