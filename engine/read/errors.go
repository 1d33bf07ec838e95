package read

import "errors"

// ErrHandler is a handler that failed on a stored event during replay.
var ErrHandler = errors.New("read: handler failed during replay")
