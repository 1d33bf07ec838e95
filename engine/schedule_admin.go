package engine

import (
	"errors"
	"time"

	json "github.com/goccy/go-json"

	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/storage"
)

// ScheduledQuery selects scheduled events for GET /_admin/scheduled.
type ScheduledQuery struct {
	// Status is pending, fired, canceled or dead_letter; empty lists all.
	Status string
	Limit  int
	Offset int
}

// DefaultScheduledLimit is the page size when ScheduledQuery.Limit is 0.
const DefaultScheduledLimit = 100

// MaxScheduledLimit bounds one page.
const MaxScheduledLimit = 1000

// Scheduled answers the list of scheduled events: {"ok", "data", "total"}.
func (e *Engine) Scheduled(t Target, q ScheduledQuery) ([]byte, error) {
	switch q.Status {
	case "", schedule.Pending, schedule.Fired, schedule.Canceled, schedule.DeadLetter:
	default:
		return nil, problem.At(problem.ErrInvalid, "status", "status must be pending, fired, canceled or dead_letter, not %q", q.Status)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return nil, problem.New(problem.ErrInvalid, "limit and offset must not be negative")
	}
	if q.Limit == 0 {
		q.Limit = DefaultScheduledLimit
	}
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	ids, total := p.sched.List(q.Status, min(q.Limit, MaxScheduledLimit), q.Offset)
	out := struct {
		OK    bool           `json:"ok"`
		Data  []scheduleView `json:"data"`
		Total int            `json:"total"`
	}{OK: true, Data: make([]scheduleView, 0, len(ids)), Total: total}
	for _, id := range ids {
		r, err := e.scheduleRecord(p, id)
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, view(r, p.sched.Status(id)))
	}
	return json.Marshal(out)
}

// CancelScheduled cancels a pending or dead-lettered scheduled event.
func (e *Engine) CancelScheduled(t Target, id string) ([]byte, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	p.fireMu.Lock()
	defer p.fireMu.Unlock()
	status, err := e.knownSchedule(p, id)
	if err != nil {
		return nil, err
	}
	if status != schedule.Pending && status != schedule.DeadLetter {
		return nil, problem.New(errors.Join(problem.ErrConflict, schedule.ErrState), "Scheduled event %s is %s and cannot be canceled", id, status)
	}
	m := schedule.Marker{At: e.clock.Now().UnixMilli(), Reason: "operator"}
	if _, err := p.store.Commit(&storage.Record{Puts: []storage.Put{{Space: schedule.Space, Key: schedule.CanceledKey(id), Value: m.Encode()}}}); err != nil {
		return nil, err
	}
	p.sched.Settle(id, schedule.Canceled)
	return statusAnswer(id, schedule.Canceled)
}

// RetryScheduled makes a dead-lettered scheduled event pending again, due at once, with its
// attempts reset.
func (e *Engine) RetryScheduled(t Target, id string) ([]byte, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	p.fireMu.Lock()
	defer p.fireMu.Unlock()
	status, err := e.knownSchedule(p, id)
	if err != nil {
		return nil, err
	}
	if status != schedule.DeadLetter {
		return nil, problem.New(errors.Join(problem.ErrConflict, schedule.ErrState), "Scheduled event %s is %s; only dead_letter events can be retried", id, status)
	}
	r, err := e.scheduleRecord(p, id)
	if err != nil {
		return nil, err
	}
	r.Attempts, r.Dead = 0, false
	if _, err := p.store.Commit(&storage.Record{Puts: []storage.Put{{Space: schedule.Space, Key: schedule.RecordKey(id), Value: r.Encode()}}}); err != nil {
		return nil, err
	}
	p.sched.Revive(id)
	return statusAnswer(id, schedule.Pending)
}

// RunDue fires every scheduled event of t due at or before now, as the scheduler would at
// that time. The caller refuses it in production.
func (e *Engine) RunDue(t Target, now time.Time) ([]byte, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	rep, err := e.fireDue(p, now)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		OK           bool `json:"ok"`
		Fired        int  `json:"fired"`
		Failed       int  `json:"failed"`
		DeadLettered int  `json:"dead_lettered"`
	}{true, rep.Fired, rep.Failed, rep.DeadLettered})
}

func (e *Engine) knownSchedule(p *pair, id string) (string, error) {
	status := p.sched.Status(id)
	if status == "" {
		return "", problem.New(errors.Join(problem.ErrNotFound, schedule.ErrUnknown), "Scheduled event %s not found", id)
	}
	return status, nil
}

func statusAnswer(id, status string) ([]byte, error) {
	return json.Marshal(struct {
		OK     bool   `json:"ok"`
		ID     string `json:"scheduled_id"`
		Status string `json:"status"`
	}{true, id, status})
}
