package saga

import (
	"encoding/json"
	"fmt"
)

// Status is a saga's status word, as the Sagas page and the contract spell it.
type Status string

// Saga statuses.
const (
	Running      Status = "running"
	Completed    Status = "completed"
	Failed       Status = "failed"
	DeadLettered Status = "dead_lettered"
)

// Step status words.
const (
	StepPending     = "pending"
	StepWaiting     = "waiting"
	StepCompleted   = "completed"
	StepSkipped     = "skipped"
	StepFailed      = "failed"
	StepCompensated = "compensated"
)

// MaxCompensationAttempts is how often one compensation is tried before the saga is
// dead-lettered (max_compensation_attempts).
const MaxCompensationAttempts = 3

// Event is the trigger event as templates see it.
type Event struct {
	AggregateType string          `json:"aggregate_type"`
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	Data          json.RawMessage `json:"data"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
}

// Error is a step's or a saga's error; Step names the step it belongs to.
type Error struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Detail  string `json:"detail,omitempty"`
	Path    string `json:"path,omitempty"`
	Step    string `json:"step,omitempty"`
}

// Step is the progress of one step.
type Step struct {
	Name         string `json:"name"`
	Status       string `json:"status"`
	CompletedAt  int64  `json:"completed_at,omitempty"`
	WaitingSince int64  `json:"waiting_since,omitempty"`
	// Deadline is the Unix millisecond at which a waiting step times out.
	Deadline int64 `json:"deadline_ms,omitempty"`
	// AwaitType and AwaitID name the awaited aggregate; events after its index AwaitFrom count.
	AwaitType string `json:"await_type,omitempty"`
	AwaitID   string `json:"await_id,omitempty"`
	AwaitFrom uint64 `json:"await_from,omitempty"`
	// Result is {"type", "data"} of the step's response: the awaited event, or the emitted one
	// for a step without await.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// State is a saga's durable state: the value of its record-space entry.
type State struct {
	ID     string `json:"saga_id"`
	Type   string `json:"type"`
	Status Status `json:"status"`
	// Depth is the saga chain depth: 1 for a saga started by a client's write.
	Depth     int   `json:"depth"`
	StartedAt int64 `json:"started_at"`
	Trigger   Event `json:"trigger"`
	// Snapshot is the trigger aggregate's state when the saga was created ("@").
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	// Current is the index of the step being run; len(Steps) once every step is done.
	Current int `json:"current"`
	// Compensating is set while completed steps are undone; Undo is the next step to look at,
	// going down, and Attempts the failed tries of its compensation.
	Compensating bool   `json:"compensating,omitempty"`
	Undo         int    `json:"undo,omitempty"`
	Attempts     int    `json:"attempts,omitempty"`
	Steps        []Step `json:"steps"`
	Error        *Error `json:"error,omitempty"`
	FinishedAt   int64  `json:"finished_at,omitempty"`
}

// New returns the state of a saga just created by its trigger.
func New(id, name string, steps []string, depth int, trigger Event, snapshot json.RawMessage, nowUnix int64) *State {
	st := &State{ID: id, Type: name, Status: Running, Depth: depth, StartedAt: nowUnix, Trigger: trigger, Snapshot: snapshot}
	st.Steps = make([]Step, len(steps))
	for i, n := range steps {
		st.Steps[i] = Step{Name: n, Status: StepPending}
	}
	return st
}

// Clone returns a deep enough copy for the state machine to change.
func (s *State) Clone() *State {
	c := *s
	c.Steps = append([]Step(nil), s.Steps...)
	for i := range c.Steps {
		if c.Steps[i].Error != nil {
			e := *c.Steps[i].Error
			c.Steps[i].Error = &e
		}
	}
	if s.Error != nil {
		e := *s.Error
		c.Error = &e
	}
	return &c
}

// Encode returns the record-space value of s.
func (s *State) Encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("BUG: saga state does not encode: " + err.Error())
	}
	return b
}

// Decode reads a record-space value.
func Decode(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if s.ID == "" || s.Current < 0 || s.Current > len(s.Steps) {
		return nil, fmt.Errorf("%w: saga %q", ErrCorrupt, s.ID)
	}
	return &s, nil
}

// Waiting returns the step the saga waits on, or nil.
func (s *State) Waiting() *Step {
	if s.Status != Running || s.Compensating || s.Current >= len(s.Steps) {
		return nil
	}
	if st := &s.Steps[s.Current]; st.Status == StepWaiting {
		return st
	}
	return nil
}

// CurrentStep names the step the saga is at: the step running or waiting, the step being
// compensated, or the failed step; empty once it finished.
func (s *State) CurrentStep() string {
	switch {
	case s.Compensating && s.Undo >= 0 && s.Undo < len(s.Steps):
		return s.Steps[s.Undo].Name
	case s.Status == Running && s.Current < len(s.Steps):
		return s.Steps[s.Current].Name
	case s.Error != nil:
		return s.Error.Step
	}
	return ""
}
