package idempotency

import "errors"

// The messages of the Writing Events page's validation table, verbatim.
var (
	// ErrEmpty is an empty key.
	ErrEmpty = errors.New("Idempotency key cannot be empty")
	// ErrTooLong is a key over MaxKeyBytes.
	ErrTooLong = errors.New("Idempotency key exceeds 255 character limit")
	// ErrCharacters is a key with a byte outside printable ASCII.
	ErrCharacters = errors.New("Idempotency key contains invalid characters (must be printable ASCII)")
	// ErrMultiple is a request with more than one X-Idempotency-Key header.
	ErrMultiple = errors.New("Multiple X-Idempotency-Key headers not allowed")
	// ErrReused is a known key sent with a different body.
	ErrReused = errors.New("Idempotency key reused with different request body")
	// ErrBadMarker is a stored marker that does not decode.
	ErrBadMarker = errors.New("idempotency: undecodable marker")
)
