package implication

import "errors"

var (
	// ErrLimit is a chain that exceeds max_depth or max_total.
	ErrLimit = errors.New("implication: limit exceeded")
	// ErrResolve is a template that resolves to something an event cannot hold: an id that is
	// not a string, data that is not an object, a map input that is not an array.
	ErrResolve = errors.New("implication: template does not resolve")
)
