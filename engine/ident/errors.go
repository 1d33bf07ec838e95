package ident

import (
	"errors"
	"strconv"
)

// The texts below are the rule sentences of identifiers.md, verbatim but for a lowercased first
// letter; the documentation gives no other wording for identifier failures. They are shown to
// API clients as part of *Error's message, so they carry no package prefix.
var (
	// ErrEmpty is an id that is the empty string.
	ErrEmpty = errors.New("the id is empty")
	// ErrUnrecognized is an id that has the shape of none of the four kinds.
	ErrUnrecognized = errors.New("canonicalized id must match one of the four kinds: UUID (v4 or v5), humane code, singleton (global or declared in the spec), or tagged UUID")
	// ErrUUIDFormat is an id that is not 36 hex digits and hyphens in the 8-4-4-4-12 layout.
	ErrUUIDFormat = errors.New("expected xxxxxxxx-xxxx-{4|5}xxx-[89ab]xxx-xxxxxxxxxxxx, 36 characters including hyphens")
	// ErrUUIDVersion is a well-formed UUID of a version other than 4 or 5.
	ErrUUIDVersion = errors.New("the version nibble (15th hex digit) must be 4 or 5")
	// ErrUUIDVariant is a well-formed UUID whose variant is not RFC 4122's.
	ErrUUIDVariant = errors.New("the variant nibble (20th hex digit) must be 8, 9, a, or b (RFC 4122 variant)")
	// ErrTaggedUUID is a tagged UUID whose UUID half is invalid; it is joined with the reason.
	ErrTaggedUUID = errors.New("the UUID portion must be a valid v4 or v5 UUID")
	// ErrTag is a tagged UUID whose tag is empty, too long, or not lowercase letters and digits.
	ErrTag = errors.New("the tag is 1-10 characters, lowercase letters and digits only ([a-z0-9]+)")
	// ErrHumane is a 9-character id with a character that normalization cannot map to Crockford
	// base32.
	ErrHumane = errors.New("after normalization, the code must consist only of canonical characters: 0-9, A-Z excluding I, L, O, U")
	// ErrSystemAgent is an id outside the system_agent allowlist for an actor of a system_ type.
	ErrSystemAgent = errors.New("when actor.type is system_*, actor.id must be one of: event_scheduler, test_data_importer, saga_coordinator, saga_compensator")
)

// maxQuoted bounds how much of a rejected id an error message repeats, so that an oversized
// input cannot make an oversized answer.
const maxQuoted = 64

// Error is every failure of this package: the write and read paths answer it with 422, Path()
// as the body's path and Error() as its message.
type Error struct {
	Field    Field  // where the id came from
	ID       string // the id as supplied
	Expected Kind   // the kind the id's shape called for; KindNone when no single kind fits
	Err      error  // one of the sentinels above, possibly joined with a second one
}

// Path is the JSON path of the offending field: key, metadata.actor.id or metadata.target.id.
func (e *Error) Path() string { return e.Field.Path() }

func (e *Error) Error() string {
	return e.Field.Path() + " " + quoteID(e.ID) + " is not a valid " + e.Expected.String() + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func quoteID(id string) string {
	if len(id) <= maxQuoted {
		return strconv.Quote(id)
	}
	return strconv.Quote(id[:maxQuoted]) + "..."
}
