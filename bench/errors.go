package bench

import "errors"

var (
	// ErrConflict is an optimistic-concurrency refusal: the stream's length was not the expected one.
	ErrConflict = errors.New("bench: conflict")
	// ErrUnavailable marks a system that could not be started; the suite reports it and goes on.
	ErrUnavailable = errors.New("bench: system unavailable")
	// ErrNoData marks a comparison input that holds no scenario.
	ErrNoData = errors.New("bench: no results")
)
