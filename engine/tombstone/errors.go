package tombstone

import "errors"

var (
	// ErrNotFound is returned for an unknown tombstone id.
	ErrNotFound = errors.New("tombstone: not found")
	// ErrInvalid is returned for a malformed request, such as a negative grace period.
	ErrInvalid = errors.New("tombstone: invalid request")
	// ErrState is returned when the status forbids the operation: cancelling a tombstone that is
	// no longer pending, executing a cancelled one.
	ErrState = errors.New("tombstone: not allowed in this status")
	// ErrGracePeriod is returned when execution is asked for before the grace period ended
	// without force.
	ErrGracePeriod = errors.New("tombstone: grace period has not ended")
)
