package write

import "errors"

// ErrImplicationsUnsupported refuses a trigger with implications when no Expander is configured.
var ErrImplicationsUnsupported = errors.New("implications are not yet supported by this server")

// MaxDataDepth bounds the nesting of event data, so that every stored event stays within what
// replay parses (tick.MaxDepth, with room for the event object around the data).
const MaxDataDepth = 100
