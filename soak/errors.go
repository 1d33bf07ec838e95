package soak

import "errors"

var (
	// ErrLost reports an acknowledged write missing or changed after a restart.
	ErrLost = errors.New("soak: acknowledged write lost")
	// ErrDuplicate reports one write applied twice.
	ErrDuplicate = errors.New("soak: write applied twice")
	// ErrChain reports a hash chain or data directory that does not verify.
	ErrChain = errors.New("soak: chain does not verify")
	// ErrStatus reports an answer with an unexpected status while the server was up.
	ErrStatus = errors.New("soak: unexpected status")
	// ErrServer reports a server that could not be started or set up.
	ErrServer = errors.New("soak: server")
)
