package schedule

import "errors"

var (
	// ErrCorrupt is a stored record that does not decode.
	ErrCorrupt = errors.New("schedule: corrupt record")
	// ErrUnknown is a scheduled id that names no schedule.
	ErrUnknown = errors.New("schedule: unknown scheduled id")
	// ErrState is an operation the schedule's status does not allow.
	ErrState = errors.New("schedule: not allowed in this status")
)
