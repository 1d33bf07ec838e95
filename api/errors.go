package api

import "errors"

var (
	// ErrBadRequest marks a malformed request: not JSON, not an object, a required field missing
	// or of the wrong type.
	ErrBadRequest = errors.New("api: bad request")
	// ErrUnauthorized marks a request without valid credentials.
	ErrUnauthorized = errors.New("api: unauthorized")
	// ErrForbidden marks valid credentials that may not do what was asked.
	ErrForbidden = errors.New("api: forbidden")
	// ErrNotFound marks a route or a record that does not exist.
	ErrNotFound = errors.New("api: not found")
	// ErrMethodNotAllowed marks a known path asked with a method it does not serve.
	ErrMethodNotAllowed = errors.New("api: method not allowed")
	// ErrConflict marks a request that conflicts with the current state.
	ErrConflict = errors.New("api: conflict")
	// ErrBodyTooLarge marks a request body over the configured limit.
	ErrBodyTooLarge = errors.New("api: request body too large")
	// ErrValidation marks a well-formed request whose content is invalid.
	ErrValidation = errors.New("api: validation failed")
	// ErrRateLimited marks a request over its rate limit.
	ErrRateLimited = errors.New("api: rate limited")
)
