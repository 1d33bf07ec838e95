package tick

import (
	"errors"
	"strings"
)

// Sentinel errors. Every *Error wraps one of them, so callers can test the
// kind of a problem with errors.Is.
var (
	// ErrInvalid marks a handler, predicate, template or path that does not compile.
	ErrInvalid = errors.New("tick: invalid")
	// ErrJSON marks input that is not JSON, or is nested deeper than MaxDepth.
	ErrJSON = errors.New("tick: malformed JSON")
	// ErrNotFound marks a non-optional path that resolved to nothing at run time.
	ErrNotFound = errors.New("tick: path not found")
	// ErrType marks a value of the wrong JSON type at run time (no coercion is done).
	ErrType = errors.New("tick: type mismatch")
)

// Error is one problem in a handler, predicate or template, located by a JSON
// Pointer (RFC 6901) relative to the compiled document, e.g. "/2/set/value".
type Error struct {
	Pointer string
	Message string
	// Err is the sentinel this problem belongs to (ErrInvalid, ErrNotFound, ...).
	Err error
}

func (e *Error) Error() string {
	if e.Pointer == "" {
		return e.Message
	}
	return e.Pointer + ": " + e.Message
}

// Unwrap returns the sentinel, so errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found; compile functions report all of them at once.
type Errors []*Error

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, x := range e {
		parts[i] = x.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap exposes the individual problems to errors.Is and errors.As.
func (e Errors) Unwrap() []error {
	out := make([]error, len(e))
	for i, x := range e {
		out[i] = x
	}
	return out
}

// pointerToken escapes one reference token as RFC 6901 requires.
func pointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
