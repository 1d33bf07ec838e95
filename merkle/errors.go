package merkle

import "errors"

var (
	// ErrIndexOutOfRange is returned for a leaf index outside the tree.
	ErrIndexOutOfRange = errors.New("merkle: leaf index out of range")
	// ErrProofInvalid is returned when an inclusion proof does not lead to the expected root.
	ErrProofInvalid = errors.New("merkle: inclusion proof does not match the root")
)
