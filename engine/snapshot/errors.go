package snapshot

import "errors"

var (
	// ErrCheckpointNotFound is an unknown checkpoint id.
	ErrCheckpointNotFound = errors.New("snapshot: checkpoint not found")
	// ErrStale is a checkpoint made under handlers that are no longer deployed.
	ErrStale = errors.New("snapshot: checkpoint made with other handlers")
	// ErrBadCheckpoint is a stored checkpoint that does not decode.
	ErrBadCheckpoint = errors.New("snapshot: undecodable checkpoint")
)
