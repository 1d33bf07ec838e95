package saga

import "errors"

var (
	// ErrCorrupt is a stored saga that does not decode.
	ErrCorrupt = errors.New("saga: corrupt state")
	// ErrTemplate is a template that does not resolve to an emittable event (an id that is not a
	// string, data that is not an object).
	ErrTemplate = errors.New("saga: template")
)

// ErrNotRetryable is a retry of a saga that is neither failed nor dead-lettered.
var ErrNotRetryable = errors.New("saga: only a failed or dead-lettered saga can be retried")
