package schedule

import (
	"errors"
	"fmt"

	"github.com/j17-go/j17/storage"
)

var (
	// ErrCorrupt is a stored record that does not decode.
	ErrCorrupt = errors.New("schedule: corrupt record")
	// ErrUnknown is a scheduled id that names no schedule.
	ErrUnknown = errors.New("schedule: unknown scheduled id")
	// ErrState is an operation the schedule's status does not allow.
	ErrState = errors.New("schedule: not allowed in this status")
	// ErrLimit is a schedule beyond MaxPerAggregate or MaxPerPair; a *LimitError says which.
	ErrLimit = errors.New("schedule: too many pending scheduled events")
)

// LimitError is the refusal of Index.Reserve: Source is the aggregate that would have more than
// MaxPerAggregate pending schedules, or PerPair is set when the pair would have more than
// MaxPerPair.
type LimitError struct {
	Source  storage.StreamKey
	PerPair bool
}

func (e *LimitError) Error() string {
	if e.PerPair {
		return fmt.Sprintf("%v: more than %d in this environment", ErrLimit, MaxPerPair)
	}
	return fmt.Sprintf("%v: more than %d for aggregate %s", ErrLimit, MaxPerAggregate, e.Source)
}

func (e *LimitError) Unwrap() error { return ErrLimit }
