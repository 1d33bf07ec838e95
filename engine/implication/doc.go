// Package implication computes the events a write implies, as the Implications guide and the
// Implications Reference describe: emit (with condition), map (with condition and $entries),
// pipeline (steps in order) and schedule, with the data template operators of tick.
//
// Expand takes the events of one request and returns every implied event, already validated
// like a client write (event type, identifiers, data depth and schema), each with the trigger's
// actor, its timestamp and metadata.implied_by {key, event_type, depth}; and every schedule the
// request creates, with its emit and cancel_on templates resolved against the trigger.
//
// # Invariants
//
//   - "@" is S0, the state of an event's aggregate before the request, for every event of a
//     batch and for implied events alike; "$" is the event itself.
//   - Chains stop at Limits: an implied event deeper than MaxDepth, or more than MaxTotal
//     implied events from one trigger, refuses the whole request (ErrLimit). Nothing is partial.
//   - Every refusal is a *problem.Error that names the implication by its spec pointer.
//
// # Concurrency
//
// Expand is pure but for the State callback, which it calls at most once per stream; an
// Expander may be shared by goroutines when its State is safe for concurrent use.
package implication
