package control

import "errors"

var (
	// ErrNotFound reports that no record has the requested id or name.
	ErrNotFound = errors.New("control: not found")
	// ErrNameTaken reports that an instance name is already in use.
	ErrNameTaken = errors.New("control: name already taken")
	// ErrInvalidName reports an instance name that is not a lowercase slug.
	ErrInvalidName = errors.New("control: invalid instance name")
	// ErrInvalidEnvironment reports an environment other than prod, staging and test.
	ErrInvalidEnvironment = errors.New("control: invalid environment")
	// ErrInvalidScope reports a key scope other than read and write.
	ErrInvalidScope = errors.New("control: invalid key scope")
	// ErrEmailTaken reports that an operator with that email already exists.
	ErrEmailTaken = errors.New("control: email already taken")
	// ErrBadCredentials reports an unknown email or a wrong password (deliberately not saying which).
	ErrBadCredentials = errors.New("control: invalid email or password")
	// ErrKeyMalformed reports a string that does not have the shape of an API key.
	ErrKeyMalformed = errors.New("control: malformed API key")
	// ErrKeyUnknown reports a well-formed API key that no record matches.
	ErrKeyUnknown = errors.New("control: unknown API key")
	// ErrKeyRevoked reports a key that was revoked, rotated, or whose scheduled revocation passed.
	ErrKeyRevoked = errors.New("control: API key revoked")
	// ErrStoreLocked reports that another process holds the control store open.
	ErrStoreLocked = errors.New("control: store is locked by another process")
)
