package engine

import (
	"errors"
	"fmt"

	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/saga"
	"github.com/j17-go/j17/storage"
)

// SagaView is a saga as GET /_admin/sagas/:id answers it.
type SagaView struct {
	SagaID      string         `json:"saga_id"`
	Type        string         `json:"type"`
	Status      string         `json:"status"`
	CurrentStep string         `json:"current_step,omitempty"`
	StartedAt   int64          `json:"started_at"`
	FinishedAt  int64          `json:"finished_at,omitempty"`
	Depth       int            `json:"depth"`
	Steps       []SagaStepView `json:"steps"`
	Error       *SagaError     `json:"error,omitempty"`
}

// SagaStepView is one step of a SagaView.
type SagaStepView struct {
	Name         string     `json:"name"`
	Status       string     `json:"status"`
	CompletedAt  int64      `json:"completed_at,omitempty"`
	WaitingSince int64      `json:"waiting_since,omitempty"`
	Error        *SagaError `json:"error,omitempty"`
}

// SagaError is a step's or a saga's error, as the Sagas page's troubleshooting shows it.
type SagaError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Detail  string `json:"detail,omitempty"`
	Path    string `json:"path,omitempty"`
	Step    string `json:"step,omitempty"`
}

// SagaQuery filters and pages GET /_admin/sagas.
type SagaQuery struct {
	// Status is empty or one of running, completed, failed, dead_lettered.
	Status string
	Limit  int
	Offset int
}

// DefaultSagaPage and MaxSagaPage bound a saga listing.
const (
	DefaultSagaPage = 50
	MaxSagaPage     = 1000
)

func viewOf(st *saga.State) SagaView {
	v := SagaView{
		SagaID: st.ID, Type: st.Type, Status: string(st.Status), CurrentStep: st.CurrentStep(),
		StartedAt: st.StartedAt, FinishedAt: st.FinishedAt, Depth: st.Depth, Error: errorView(st.Error, true),
		Steps: make([]SagaStepView, len(st.Steps)),
	}
	for i, s := range st.Steps {
		v.Steps[i] = SagaStepView{Name: s.Name, Status: s.Status, CompletedAt: s.CompletedAt, WaitingSince: s.WaitingSince, Error: errorView(s.Error, false)}
	}
	return v
}

func errorView(e *saga.Error, withStep bool) *SagaError {
	if e == nil {
		return nil
	}
	v := &SagaError{Message: e.Message, Type: e.Type, Detail: e.Detail, Path: e.Path}
	if withStep {
		v.Step = e.Step
	}
	return v
}

// Sagas answers GET /_admin/sagas: the sagas of t in id order (which is creation order), the
// page asked for, and how many match.
func (e *Engine) Sagas(t Target, q SagaQuery) ([]SagaView, int, error) {
	switch saga.Status(q.Status) {
	case "", saga.Running, saga.Completed, saga.Failed, saga.DeadLettered:
	default:
		return nil, 0, problem.At(problem.ErrMalformed, "status", "Unknown saga status %q (use running, completed, failed or dead_lettered)", q.Status)
	}
	if q.Limit <= 0 {
		q.Limit = DefaultSagaPage
	}
	q.Limit = min(q.Limit, MaxSagaPage)
	q.Offset = max(q.Offset, 0)
	p, err := e.open(t)
	if err != nil {
		return nil, 0, err
	}
	out := []SagaView{}
	total := 0
	err = p.store.Scan(sagaSpace, "", func(_ string, v []byte) error {
		st, err := saga.Decode(v)
		if err != nil {
			return err
		}
		if q.Status != "" && string(st.Status) != q.Status {
			return nil
		}
		if total >= q.Offset && len(out) < q.Limit {
			out = append(out, viewOf(st))
		}
		total++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// Saga answers GET /_admin/sagas/:id.
func (e *Engine) Saga(t Target, id string) (SagaView, error) {
	p, err := e.open(t)
	if err != nil {
		return SagaView{}, err
	}
	st, err := loadSaga(p, id)
	if err != nil {
		return SagaView{}, err
	}
	return viewOf(st), nil
}

// RetrySaga answers POST /_admin/sagas/:id/retry: a failed saga restarts from its failed step, a
// dead-lettered one resumes its compensation. Any other status is a conflict.
func (e *Engine) RetrySaga(t Target, id string) (SagaView, error) {
	p, err := e.open(t)
	if err != nil {
		return SagaView{}, err
	}
	set := p.sagas
	set.run.Lock()
	defer set.run.Unlock()
	st, err := loadSaga(p, id)
	if err != nil {
		return SagaView{}, err
	}
	next, err := saga.Retry(st)
	if errors.Is(err, saga.ErrNotRetryable) {
		return SagaView{}, problem.New(problem.ErrConflict, "Saga %s is %s; only a failed or dead_lettered saga can be retried", id, st.Status)
	}
	if err != nil {
		return SagaView{}, err
	}
	if !set.reserve() {
		return SagaView{}, problem.New(problem.ErrInvalid, "Saga %s cannot resume: %d sagas are already running, the most an instance may run", id, MaxRunningSagas)
	}
	if err := commitSaga(p, next); err != nil {
		set.unreserve(1)
		return SagaView{}, fmt.Errorf("engine: cannot save the retried saga: %w", err)
	}
	set.admit(nil, next)
	e.sagas.signal()
	return viewOf(next), nil
}

func loadSaga(p *pair, id string) (*saga.State, error) {
	raw, err := p.store.Get(sagaSpace, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && len(raw) == 0) {
		return nil, problem.New(problem.ErrNotFound, "Saga '%s' not found", id)
	}
	if err != nil {
		return nil, err
	}
	return saga.Decode(raw)
}
