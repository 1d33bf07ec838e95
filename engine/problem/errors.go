package problem

import (
	"errors"
	"fmt"
)

var (
	// ErrMalformed is a request that is not well formed: not JSON, not an object, a required
	// field missing or of the wrong type, a wrong Content-Type (400).
	ErrMalformed = errors.New("malformed request")
	// ErrInvalid is a well-formed request whose content is refused: schema validation,
	// identifiers, unknown agent or target types, idempotency key rules (422).
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound is an unknown aggregate type or event type, or an aggregate with no events (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict is a failed optimistic concurrency check (409).
	ErrConflict = errors.New("conflict")
)

// Error is a refused request: its kind, the human message and where the fault lies.
type Error struct {
	Kind    error
	Message string
	// Path is the JSON path of the offending field ("data.email", "key", "metadata.actor.id").
	Path string
	// EventIndex is the 0-based index of the offending event of a batch; nil outside batches.
	EventIndex *int
	// Details is JSON-ready detail: {expected, actual} for a conflict, {field, constraint,
	// expected, received} for a schema failure.
	Details any
}

func (e *Error) Error() string {
	if e.Path != "" {
		return e.Message + " (" + e.Path + ")"
	}
	return e.Message
}

// Unwrap makes errors.Is(err, Kind) hold.
func (e *Error) Unwrap() error { return e.Kind }

// New builds an Error of kind with a formatted message.
func New(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// At builds an Error of kind about the field at path.
func At(kind error, path, format string, args ...any) *Error {
	return &Error{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)}
}

// InBatch returns err marked with the batch index i when it is an *Error; other errors pass.
func InBatch(err error, i int) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.EventIndex = &i
	return &c
}
