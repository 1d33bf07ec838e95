package engine

import (
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/storage"
)

// MaxRootCheckpoint bounds the aggregates one root checkpoint may cover, since it is one record.
const MaxRootCheckpoint = 10_000

// Checkpoints lists the checkpoints of t.
func (e *Engine) Checkpoints(t Target) ([]snapshot.Checkpoint, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	return snapshot.Checkpoints(p.store)
}

// CreateCheckpoint saves the current state of one aggregate, or of every aggregate of the type
// when id is empty (a root checkpoint).
func (e *Engine) CreateCheckpoint(t Target, typ, id string) (snapshot.Checkpoint, error) {
	p, m, tm, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return snapshot.Checkpoint{}, err
	}
	var ids []string
	if id != "" {
		ids = []string{k.ID}
	} else {
		cursor := ""
		for {
			page, err := p.store.List(typ, cursor, MaxListPage)
			if err != nil {
				return snapshot.Checkpoint{}, err
			}
			ids = append(ids, page...)
			if len(ids) > MaxRootCheckpoint {
				return snapshot.Checkpoint{}, problem.New(problem.ErrInvalid, "A root checkpoint covers at most %d aggregates; type '%s' has more", MaxRootCheckpoint, typ)
			}
			if len(page) < MaxListPage {
				break
			}
			cursor = page[len(page)-1]
		}
	}
	members := make([]snapshot.Member, 0, len(ids))
	for _, aid := range ids {
		ak := storage.StreamKey{Type: typ, ID: aid}
		info, err := p.store.Info(ak)
		if err != nil {
			return snapshot.Checkpoint{}, err
		}
		if info.Length == 0 {
			return snapshot.Checkpoint{}, notFound()
		}
		ent, err := e.state(p, m, tm, ak, info, true)
		if err != nil {
			return snapshot.Checkpoint{}, err
		}
		members = append(members, snapshot.Member{ID: aid, Length: info.Length, State: ent.JSON})
	}
	return snapshot.CreateCheckpoint(p.store, e.clock.Now(), typ, k.ID, tm.fingerprint, members)
}

// RestoreCheckpoint makes a checkpoint's states the snapshots reads start from; it returns how
// many were restored.
func (e *Engine) RestoreCheckpoint(t Target, id string) (int, error) {
	p, err := e.open(t)
	if err != nil {
		return 0, err
	}
	cp, err := snapshot.GetCheckpoint(p.store, id)
	if err != nil {
		return 0, err
	}
	m := p.model.Load()
	if m == nil || m.types[cp.AggregateType] == nil {
		return 0, problem.New(problem.ErrInvalid, "Checkpoint %s is of aggregate type '%s', which the deployed spec no longer has", id, cp.AggregateType)
	}
	return snapshot.RestoreCheckpoint(p.store, id, m.types[cp.AggregateType].fingerprint)
}

// DeleteCheckpoint removes a checkpoint.
func (e *Engine) DeleteCheckpoint(t Target, id string) error {
	p, err := e.open(t)
	if err != nil {
		return err
	}
	return snapshot.DeleteCheckpoint(p.store, id)
}
