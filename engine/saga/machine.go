package saga

import (
	"encoding/json"
	"fmt"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage/canonical"
)

// Kind is what a saga does next.
type Kind int

// Action kinds.
const (
	// Idle: nothing to do until an awaited event arrives or a deadline passes.
	Idle Kind = iota
	// Skip: the step's condition is false; After marks it skipped.
	Skip
	// Emit: write the step's event; After is the state once it is written.
	Emit
	// Timeout: the waiting step's deadline passed; After starts compensation.
	Timeout
	// Compensate: write the compensation of step Step.
	Compensate
	// Finish: write Emit (on_complete or on_failed, possibly nil) and end with After.
	Finish
	// Fail: a condition could not be evaluated; After starts compensation.
	Fail
)

// Action is the next thing a saga does. Every action but Idle has an After state, which the
// caller stores in the same record as the action's event.
type Action struct {
	Kind Kind
	// Step is the index of the step concerned; -1 for Finish.
	Step int
	// Emit is the event template to write, if any.
	Emit  *spec.Emit
	After *State
}

// Next returns the action s takes at Unix millisecond nowMs under its definition def.
func Next(def *spec.Saga, s *State, nowMs int64) Action {
	if s.Status != Running {
		return Action{Kind: Idle}
	}
	if s.Compensating {
		return nextUndo(def, s, nowMs)
	}
	if s.Current >= len(s.Steps) {
		a := s.Clone()
		a.Status, a.FinishedAt = Completed, nowMs/1000
		return Action{Kind: Finish, Step: -1, Emit: def.OnComplete, After: a}
	}
	i := s.Current
	step := def.Steps[i]
	switch s.Steps[i].Status {
	case StepWaiting:
		if nowMs < s.Steps[i].Deadline {
			return Action{Kind: Idle}
		}
		return Action{Kind: Timeout, Step: i, After: s.fail(i, &Error{
			Message: "timeout", Type: "timeout",
			Detail: fmt.Sprintf("no %v event on %s within %d ms", step.Await.EventTypes, step.Await.AggregateType, step.Timeout.Milliseconds()),
		}, nowMs)}
	case StepPending:
		if step.Condition != nil {
			sc, err := s.Scope()
			if err != nil {
				return Action{Kind: Fail, Step: i, After: s.fail(i, &Error{Message: "condition_failed", Type: "corrupt_state", Detail: err.Error()}, nowMs)}
			}
			ok, err := step.Condition.Eval(sc)
			if err != nil {
				return Action{Kind: Fail, Step: i, After: s.fail(i, &Error{Message: "condition_failed", Type: "condition_error", Detail: err.Error(), Path: "condition"}, nowMs)}
			}
			if !ok {
				a := s.Clone()
				a.Steps[i].Status = StepSkipped
				a.Current++
				return Action{Kind: Skip, Step: i, After: a}
			}
		}
		a := s.Clone()
		if step.Await != nil {
			a.Steps[i].Status = StepWaiting
			a.Steps[i].WaitingSince = nowMs / 1000
			a.Steps[i].Deadline = nowMs + step.Timeout.Milliseconds()
			a.Steps[i].AwaitType = step.Await.AggregateType
		} else {
			a.Steps[i].Status, a.Steps[i].CompletedAt = StepCompleted, nowMs/1000
			a.Current++
		}
		return Action{Kind: Emit, Step: i, Emit: step.Emit, After: a}
	}
	panic(fmt.Sprintf("BUG: saga %s step %d has status %q while current", s.ID, i, s.Steps[i].Status))
}

func nextUndo(def *spec.Saga, s *State, nowMs int64) Action {
	for i := s.Undo; i >= 0; i-- {
		if s.Steps[i].Status == StepCompleted && def.Steps[i].Compensate != nil {
			a := s.Clone()
			a.Steps[i].Status, a.Steps[i].Error = StepCompensated, nil
			a.Undo, a.Attempts = i-1, 0
			return Action{Kind: Compensate, Step: i, Emit: def.Steps[i].Compensate, After: a}
		}
	}
	a := s.Clone()
	a.Compensating, a.Undo, a.Attempts = false, 0, 0
	a.Status, a.FinishedAt = Failed, nowMs/1000
	return Action{Kind: Finish, Step: -1, Emit: def.OnFailed, After: a}
}

// fail marks step i failed with e and starts compensation of the steps before it.
func (s *State) fail(i int, e *Error, nowMs int64) *State {
	a := s.Clone()
	e.Step = s.Steps[i].Name
	a.Steps[i].Status, a.Steps[i].Error = StepFailed, e
	a.Steps[i].Deadline = 0
	se := *e
	a.Error = &se
	a.Compensating, a.Undo, a.Attempts = true, i-1, 0
	return a
}

// Emitted records in act.After what an Emit action wrote (other actions need nothing): the event type and data, and, for a
// step that awaits, the awaited aggregate id and the stream length after which replies count.
func Emitted(act *Action, eventType string, data []byte, awaitID string, awaitFrom uint64) {
	if act.Kind != Emit {
		return
	}
	st := &act.After.Steps[act.Step]
	if st.Status == StepWaiting {
		st.AwaitID, st.AwaitFrom = awaitID, awaitFrom
		return
	}
	st.Result = result(eventType, data)
}

// EmitFailed returns the state after act could not write its event: a step's emit fails the saga
// into compensation; a compensation counts an attempt and dead-letters the saga after
// MaxCompensationAttempts; an on_complete or on_failed that cannot be written leaves the saga
// failed with that error.
func EmitFailed(s *State, act Action, e *Error, nowMs int64) *State {
	switch act.Kind {
	case Emit:
		return s.fail(act.Step, e, nowMs)
	case Compensate:
		a := s.Clone()
		e.Step = s.Steps[act.Step].Name
		a.Steps[act.Step].Error = e
		a.Attempts++
		if a.Attempts >= MaxCompensationAttempts {
			a.Status, a.FinishedAt = DeadLettered, nowMs/1000
		}
		return a
	case Finish:
		a := act.After.Clone()
		e.Step = "on_complete"
		if s.Compensating {
			e.Step = "on_failed"
		}
		a.Status, a.Error = Failed, e
		return a
	}
	panic(fmt.Sprintf("BUG: saga action %d cannot fail", act.Kind))
}

// Matched returns the state after the waiting step received an awaited event.
func Matched(s *State, eventType string, data []byte, nowMs int64) *State {
	a := s.Clone()
	st := &a.Steps[a.Current]
	st.Status, st.CompletedAt, st.Deadline = StepCompleted, nowMs/1000, 0
	st.Result = result(eventType, data)
	a.Current++
	return a
}

// Retry returns the state that resumes a failed or dead-lettered saga: a failed saga restarts
// from its failed step (the steps before it count as completed again); a dead-lettered saga
// resumes its compensation with fresh attempts.
func Retry(s *State) (*State, error) {
	a := s.Clone()
	switch s.Status {
	case DeadLettered:
		a.Status, a.FinishedAt, a.Attempts = Running, 0, 0
		return a, nil
	case Failed:
	default:
		return nil, fmt.Errorf("%w: saga %s is %s", ErrNotRetryable, s.ID, s.Status)
	}
	from := len(a.Steps)
	for i := range a.Steps {
		if a.Steps[i].Status == StepFailed {
			from = i
			break
		}
	}
	for i := range a.Steps {
		st := &a.Steps[i]
		switch {
		case i < from && st.Status == StepCompensated:
			st.Status = StepCompleted
		case i >= from:
			*st = Step{Name: st.Name, Status: StepPending}
		}
		st.Error = nil
	}
	a.Status, a.Current, a.Error, a.FinishedAt = Running, from, nil, 0
	a.Compensating, a.Undo, a.Attempts = false, 0, 0
	return a, nil
}

func result(eventType string, data []byte) json.RawMessage {
	b := append([]byte(`{"data":`), data...)
	b = append(b, `,"type":`...)
	b = canonical.AppendString(b, eventType)
	return append(b, '}')
}
