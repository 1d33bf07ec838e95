// Package saga is the saga state machine of the Sagas page: a saga's durable state, the
// templates its steps render, the next action a saga takes, and the index that finds the sagas
// waiting on an aggregate.
//
// # Model
//
// A saga is created by its trigger event with a snapshot of the trigger aggregate's state ("@").
// Its steps run in order. A step whose condition is false is skipped. A step emits its event;
// with "await" it then waits for one of the awaited event types on the awaited aggregate type
// with the id the step emitted to, until its timeout. A step that cannot emit, or that times
// out, fails the saga: the completed steps are compensated in reverse order (each compensation
// tried up to MaxCompensationAttempts times, after which the saga is dead-lettered), then
// on_failed is emitted and the saga is failed. When every step is done, on_complete is emitted
// and the saga is completed.
//
// # Invariants
//
//   - State is a value: Next never changes the state it is given; it returns the action to take
//     and the state after it, so the caller can write the action's event and the new state in one
//     commit record and publish the new state only once that record is durable.
//   - A step's event is emitted at most once: the state after an emit records the step as
//     emitted, and it is that state which the emit's record carries.
//   - Encode and Decode round-trip every field; the encoding is the record-space value.
//
// # Concurrency
//
// State and the functions over it are not synchronized; the caller serializes the actions of one
// saga. Index is safe for concurrent use.
package saga
