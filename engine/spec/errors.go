package spec

import "errors"

var (
	// ErrInvalid is wrapped by Report.Err for a spec that fails validation.
	ErrInvalid = errors.New("spec: invalid spec")
	// ErrIncompatible is wrapped by CompatError for a deploy that would break existing events.
	ErrIncompatible = errors.New("spec: incompatible with the deployed spec")
)
