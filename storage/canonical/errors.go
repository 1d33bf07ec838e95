package canonical

import "errors"

var (
	// ErrSyntax marks text that is not a single JSON value.
	ErrSyntax = errors.New("canonical: invalid JSON")
	// ErrDuplicateKey marks an object that names one key twice; it has no single canonical form.
	ErrDuplicateKey = errors.New("canonical: duplicate object key")
	// ErrInvalidString marks a string holding invalid UTF-8 or a lone surrogate escape.
	ErrInvalidString = errors.New("canonical: invalid string")
	// ErrTooDeep marks nesting deeper than MaxDepth.
	ErrTooDeep = errors.New("canonical: nesting too deep")
)
