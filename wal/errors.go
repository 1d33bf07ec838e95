package wal

import (
	"errors"
	"fmt"
)

var (
	// ErrCorrupt marks a record whose checksum or framing is wrong somewhere other than a torn tail.
	ErrCorrupt = errors.New("wal: corrupt record")
	// ErrClosed is returned by every operation on a closed log.
	ErrClosed = errors.New("wal: log closed")
	// ErrNotFound is returned by Read for a position that holds no durable record.
	ErrNotFound = errors.New("wal: no record at position")
	// ErrTooLarge is returned by Write for a payload longer than MaxPayload.
	ErrTooLarge = errors.New("wal: payload too large")
	// ErrLocked is returned by Open and Repair when another Log holds the directory.
	ErrLocked = errors.New("wal: log directory in use")
	// ErrNotSealed is returned by Compact for the active segment or a segment that does not exist.
	ErrNotSealed = errors.New("wal: segment is not sealed")
)

// CorruptionError says where a bad record was found. errors.Is(err, ErrCorrupt) holds.
type CorruptionError struct {
	File   string // path of the segment file
	Offset int64  // byte offset of the bad record's header
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt record in %s at offset %d: %s (run `j17 repair` to truncate the log there)", e.File, e.Offset, e.Reason)
}

// Unwrap lets errors.Is(err, ErrCorrupt) hold.
func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

// IsCorruption reports whether err says that the log holds a bad record.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorrupt) }
