package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	json "github.com/goccy/go-json"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
)

// schedulerActor is the actor of fired scheduled events (the Scheduled Events page).
var schedulerActor = []byte(`{"id":"` + ident.EventScheduler + `","type":"` + ident.SystemAgentType + `"}`)

// fireReport counts what one pass over the due schedules of a pair did.
type fireReport struct {
	Fired, Failed, DeadLettered int
}

// fireDue fires every pending schedule of p due at or before now. A failed fire counts an
// attempt and stays due, to be tried again at the next pass; the tenth failure moves it to
// dead_letter. Passes over one pair are serialized, so that no schedule fires twice.
func (e *Engine) fireDue(p *pair, now time.Time) (fireReport, error) {
	p.fireMu.Lock()
	defer p.fireMu.Unlock()
	var rep fireReport
	ids := p.sched.Due(now.UnixMilli())
	for i, id := range ids {
		if p.sched.Status(id) != schedule.Pending {
			continue
		}
		r, err := e.scheduleRecord(p, id)
		if err != nil {
			for _, rest := range ids[i:] {
				p.sched.Retry(rest)
			}
			return rep, err
		}
		ferr := e.fire(p, r, now)
		if ferr == nil {
			rep.Fired++
			continue
		}
		dead, err := e.fireFailed(p, r, ferr)
		if err != nil {
			for _, rest := range ids[i:] {
				p.sched.Retry(rest)
			}
			return rep, err
		}
		if dead {
			rep.DeadLettered++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

func (e *Engine) scheduleRecord(p *pair, id string) (*schedule.Record, error) {
	raw, err := p.store.Get(schedule.Space, schedule.RecordKey(id))
	if err != nil {
		return nil, fmt.Errorf("engine: scheduled %s: %w", id, err)
	}
	return schedule.DecodeRecord(raw)
}

// fire writes a schedule's event, checked like a client write under the current spec, with
// its implications, and marks the schedule fired in the same record.
func (e *Engine) fire(p *pair, r *schedule.Record, now time.Time) error {
	m := p.model.Load()
	if m == nil {
		return errors.New("no_spec_deployed: no spec is deployed in this environment")
	}
	body := make([]byte, 0, 96+len(r.Data))
	body = append(body, `{"data":`...)
	body = append(body, r.Data...)
	body = append(body, `,"metadata":{"actor":`...)
	body = append(body, schedulerActor...)
	body = append(body, `}}`...)
	plan, err := write.Prepare(m.spec, m.rules, write.Input{
		AggregateType: r.AggregateType, ID: r.AggregateID, EventType: r.EventType, Body: body,
		Now: now, Prod: p.target.Environment == control.EnvProd,
	})
	if err != nil {
		return err
	}
	plan.Events[0].Metadata = firedMetadata(r, now.Unix())
	hooks := e.newWriteHooks(p, m, now, 0)
	defer hooks.release()
	fired := schedule.Marker{At: now.UnixMilli()}
	expand, stateless := hooks.options(plan)
	_, err = write.Commit(p.store, plan, write.Options{
		Expand: expand, Stateless: stateless,
		Puts: func(uint64, int) []storage.Put {
			return []storage.Put{{Space: schedule.Space, Key: schedule.FiredKey(r.ID), Value: fired.Encode()}}
		},
		AfterCommit: hooks.after(func() { p.sched.Settle(r.ID, schedule.Fired) }),
	})
	return err
}

// firedMetadata is the metadata of a fired event: the scheduler actor, implied_by, scheduled
// {scheduled_id, fire_at} and the firing time, in canonical key order.
func firedMetadata(r *schedule.Record, ts int64) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"actor":`...)
	b = append(b, schedulerActor...)
	b = implication.AppendImpliedBy(append(b, `,"implied_by":`...), r.ImpliedBy)
	b = append(b, `,"scheduled":{"fire_at":`...)
	b = canonical.AppendString(b, time.UnixMilli(r.FireAt).UTC().Format(time.RFC3339))
	b = append(b, `,"scheduled_id":`...)
	b = canonical.AppendString(b, r.ID)
	b = append(b, `},"timestamp":`...)
	b = fmt.Appendf(b, "%d}", ts)
	return b
}

// fireFailed records a failed attempt with its error; the tenth moves r to dead_letter.
func (e *Engine) fireFailed(p *pair, r *schedule.Record, cause error) (bool, error) {
	r.Attempts++
	r.LastError = cause.Error()
	r.Dead = r.Attempts >= schedule.MaxAttempts
	if _, err := p.store.Commit(&storage.Record{Puts: []storage.Put{{Space: schedule.Space, Key: schedule.RecordKey(r.ID), Value: r.Encode()}}}); err != nil {
		return false, err
	}
	e.log.Warn("scheduled event failed to fire", slog.String("scheduled_id", r.ID), slog.Int("attempts", r.Attempts), slog.Bool("dead_letter", r.Dead), slog.Any("err", cause))
	if r.Dead {
		p.sched.Bury(r.ID)
	} else {
		p.sched.Retry(r.ID)
	}
	return r.Dead, nil
}

// scheduleView is a schedule as the operator API shows it.
type scheduleView struct {
	ID            string                `json:"scheduled_id"`
	Status        string                `json:"status"`
	AggregateType string                `json:"aggregate_type"`
	AggregateID   string                `json:"aggregate_id"`
	EventType     string                `json:"event_type"`
	Data          json.RawMessage       `json:"data"`
	FireAt        string                `json:"fire_at"`
	CreatedAt     string                `json:"created_at"`
	ImpliedBy     implication.ImpliedBy `json:"implied_by"`
	CancelOn      []implication.Match   `json:"cancel_on,omitempty"`
	Attempts      int                   `json:"attempts"`
	LastError     string                `json:"last_error,omitempty"`
}

func view(r *schedule.Record, status string) scheduleView {
	return scheduleView{
		ID: r.ID, Status: status, AggregateType: r.AggregateType, AggregateID: r.AggregateID, EventType: r.EventType,
		Data: r.Data, FireAt: rfc3339(r.FireAt), CreatedAt: rfc3339(r.CreatedAt), ImpliedBy: r.ImpliedBy,
		CancelOn: r.CancelOn, Attempts: r.Attempts, LastError: r.LastError,
	}
}

func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
