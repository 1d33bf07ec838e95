package storage

import (
	"errors"
	"fmt"
)

var (
	// ErrConflict is the sentinel of every *ConflictError: an expectation about a stream's length
	// did not hold, and nothing was written.
	ErrConflict = errors.New("storage: stream length conflict")
	// ErrInvalid marks a malformed request: an empty record, a stream key with an empty part or a
	// NUL byte, an event without a type, data or metadata that is not JSON.
	ErrInvalid = errors.New("storage: invalid request")
	// ErrClosed is returned by every operation on a closed store.
	ErrClosed = errors.New("storage: store closed")
	// ErrFailed is returned by every commit after the log failed a write or an fsync; the store
	// must be reopened, which recovers everything that was acknowledged.
	ErrFailed = errors.New("storage: store failed")
	// ErrNotFound is returned by Get for a key that holds no value and by Event for an index past
	// the stream's end.
	ErrNotFound = errors.New("storage: not found")
	// ErrChainMismatch is returned by Import when an event's recomputed chain hash differs from the
	// one in the export, and by Check when a stored chain does not verify.
	ErrChainMismatch = errors.New("storage: hash chain mismatch")
	// ErrIndexMismatch is returned by Check when the index differs from a rebuild from the log.
	ErrIndexMismatch = errors.New("storage: index differs from the log")
	// ErrBadRecord marks a log record that the store cannot decode; the log itself checksums
	// records, so this means a record written by something else.
	ErrBadRecord = errors.New("storage: undecodable log record")
	// ErrBadIndex marks index.db content that does not decode, contradicts itself or places a
	// record where the log holds another. The index is derived from the log: Open rebuilds an
	// index it cannot load, and Check reports such content as ErrIndexMismatch.
	ErrBadIndex = errors.New("storage: undecodable index")
)

// ConflictError says which stream failed its expectation. errors.Is(err, ErrConflict) holds.
// Actual is a durable length: a commit returns the error only once the record that gave the
// stream that length is durable and visible to reads.
type ConflictError struct {
	Stream   StreamKey
	Kind     ExpectKind
	Expected uint64
	Actual   uint64
	lsn      uint64 // the record that gave the stream its length Actual
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("storage: stream %s: expected length %d, actual %d", e.Stream, e.Expected, e.Actual)
}

// Unwrap lets errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }
