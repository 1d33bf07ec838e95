package audit

import "errors"

var (
	// ErrIndexOutOfRange is returned for a proof index outside the stream.
	ErrIndexOutOfRange = errors.New("audit: event index out of range")
	// ErrNotFound is returned for a stream without events and an unknown anchor.
	ErrNotFound = errors.New("audit: not found")
	// ErrInvalid is returned for malformed input: settings out of range, an anchor too large.
	ErrInvalid = errors.New("audit: invalid request")
)
