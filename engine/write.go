package engine

import (
	"errors"
	"fmt"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/idempotency"
	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
)

// WriteInput is one write request: POST /{type}/{id}/{event_type}, or the batch POST /{type}/{id}
// when EventType is empty.
type WriteInput struct {
	AggregateType string
	ID            string
	EventType     string
	Body          []byte
	// IdempotencyKey is the validated X-Idempotency-Key; HasKey says one was sent.
	IdempotencyKey string
	HasKey         bool
	// RequestID is remembered with an idempotency key and answered again on a replay.
	RequestID string
}

// WriteAnswer is the answer of a write: its status and JSON body. Replayed is set when an
// idempotency key matched, and RequestID is then the request id of the original write.
type WriteAnswer struct {
	Status    int
	Body      []byte
	Replayed  bool
	RequestID string
}

const statusCreated = 201

// Write checks and commits one write request.
func (e *Engine) Write(t Target, in WriteInput) (WriteAnswer, error) {
	p, err := e.open(t)
	if err != nil {
		return WriteAnswer{}, err
	}
	if in.HasKey {
		unlock := p.locks.Lock(in.IdempotencyKey)
		defer unlock()
		fp := idempotency.Fingerprint(in.Body)
		ans, found, err := e.replay(p, in.IdempotencyKey, fp)
		if found || err != nil {
			return ans, err
		}
		return e.write(p, in, &fp)
	}
	return e.write(p, in, nil)
}

func (e *Engine) write(p *pair, in WriteInput, fp *[32]byte) (WriteAnswer, error) {
	m := p.model.Load()
	var sp *spec.Spec
	var rules ident.Rules
	if m != nil {
		sp, rules = m.spec, m.rules
	}
	now := e.clock.Now()
	plan, err := write.Prepare(sp, rules, write.Input{
		AggregateType: in.AggregateType, ID: in.ID, EventType: in.EventType, Body: in.Body,
		Now: now, Prod: p.target.Environment == control.EnvProd,
	})
	if err != nil {
		return WriteAnswer{}, err
	}
	hooks := e.newWriteHooks(p, m, now, 0)
	defer hooks.release()
	expand, stateless := hooks.options(plan)
	opts := write.Options{Expand: expand, Stateless: stateless, AfterCommit: hooks.after(e.opts.AfterCommit)}
	if fp != nil {
		opts.Puts = func(after uint64, implied int) []storage.Put {
			mk := idempotency.Marker{
				Hash: *fp, LastUsed: now.UnixMilli(), Status: statusCreated, RequestID: in.RequestID,
				Type: plan.Stream.Type, ID: plan.Stream.ID, From: after + 1, Count: len(plan.Events),
				Batch: plan.Batch, ImpliedCount: implied,
			}
			return []storage.Put{{Space: idempotency.Space, Key: in.IdempotencyKey, Value: mk.Encode()}}
		}
	}
	res, err := write.Commit(p.store, plan, opts)
	if err != nil {
		return WriteAnswer{}, err
	}
	if m != nil {
		e.cache.Delete(cacheKey(p, m, plan.Stream))
	}
	return WriteAnswer{
		Status: statusCreated, Body: write.AppendAnswer(nil, plan.Batch, res.StreamIDs, res.Implied), RequestID: in.RequestID,
	}, nil
}

// replay answers a request whose idempotency key is remembered: the original answer for the same
// body, a 422 for another. found is false when the key is unknown or expired.
func (e *Engine) replay(p *pair, key string, fp [32]byte) (WriteAnswer, bool, error) {
	raw, err := p.store.Get(idempotency.Space, key)
	if errors.Is(err, storage.ErrNotFound) {
		return WriteAnswer{}, false, nil
	}
	if err != nil {
		return WriteAnswer{}, false, err
	}
	mk, err := idempotency.Decode(raw)
	if err != nil {
		return WriteAnswer{}, false, err
	}
	now := e.clock.Now()
	if !mk.Live(now, e.idempotencyTTL()) {
		return WriteAnswer{}, false, nil
	}
	if mk.Hash != fp {
		return WriteAnswer{}, true, problem.At(problem.ErrInvalid, idempotency.Header, "%s", idempotency.ErrReused)
	}
	k := storage.StreamKey{Type: mk.Type, ID: mk.ID}
	ids := make([]storage.StreamID, 0, mk.Count)
	err = p.store.Range(k, mk.From, mk.From+uint64(mk.Count)-1, func(ev storage.Event) error {
		ids = append(ids, ev.StreamID)
		return nil
	})
	if err != nil {
		return WriteAnswer{}, true, err
	}
	if len(ids) != mk.Count {
		return WriteAnswer{}, true, fmt.Errorf("engine: idempotency key %q names events %s %d..%d that are gone", key, k, mk.From, mk.From+uint64(mk.Count)-1)
	}
	// A replay is a use: the key lives another TTL from now.
	mk.LastUsed = now.UnixMilli()
	if _, err := p.store.Commit(&storage.Record{Puts: []storage.Put{{Space: idempotency.Space, Key: key, Value: mk.Encode()}}}); err != nil {
		return WriteAnswer{}, true, err
	}
	return WriteAnswer{
		Status: mk.Status, Body: write.AppendAnswer(nil, mk.Batch, ids, mk.ImpliedCount),
		Replayed: true, RequestID: mk.RequestID,
	}, true, nil
}
