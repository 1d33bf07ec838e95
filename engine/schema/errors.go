package schema

import "errors"

var (
	// ErrValidationFailed is what every *ValidationError matches with errors.Is: event data
	// did not satisfy its schema.
	ErrValidationFailed = errors.New("schema: event data failed schema validation")

	// ErrInvalidJSON is returned by ValidateJSON when the data is not one well-formed JSON value.
	ErrInvalidJSON = errors.New("schema: data is not valid JSON")
)
