package engine

import (
	"errors"
	"log/slog"
	"strconv"

	"github.com/j17-go/j17/engine/cache"
	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/read"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// ReadQuery holds the options of GET /{type}/{id}.
type ReadQuery struct {
	// Synchronous bypasses the cache.
	Synchronous bool
	// At, when set, asks for the state from the events with timestamp at or before *At.
	At *int64
}

// ListQuery holds the options of GET /{type}.
type ListQuery struct {
	Limit       int
	Cursor      string
	Resolve     bool
	Synchronous bool
}

// snapshotFloor is the length below which a read does not look for a snapshot: replaying so few
// events costs less than reading the snapshot file.
const snapshotFloor = 64

// aggregate resolves the type and id of a read.
func (e *Engine) aggregate(t Target, typ, id string) (*pair, *model, *typeModel, storage.StreamKey, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, nil, nil, storage.StreamKey{}, err
	}
	m := p.model.Load()
	if m == nil {
		return nil, nil, nil, storage.StreamKey{}, problem.New(problem.ErrNotFound, "Aggregate type '%s' not found in spec (no spec is deployed)", typ)
	}
	tm := m.types[typ]
	if tm == nil {
		return nil, nil, nil, storage.StreamKey{}, problem.New(problem.ErrNotFound, "Aggregate type '%s' not found in spec", typ)
	}
	if id == "" {
		return p, m, tm, storage.StreamKey{Type: typ}, nil
	}
	norm, _, err := m.rules.Normalize(ident.Key, id)
	if err != nil {
		var ie *ident.Error
		if errors.As(err, &ie) {
			return nil, nil, nil, storage.StreamKey{}, problem.At(problem.ErrInvalid, ie.Path(), "%s", ie.Error())
		}
		return nil, nil, nil, storage.StreamKey{}, err
	}
	return p, m, tm, storage.StreamKey{Type: typ, ID: norm}, nil
}

func notFound() error { return problem.New(problem.ErrNotFound, "Aggregate not found") }

// Aggregate answers GET /{type}/{id}.
func (e *Engine) Aggregate(t Target, typ, id string, q ReadQuery) ([]byte, error) {
	p, m, tm, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return nil, err
	}
	info, err := p.store.Info(k)
	if err != nil {
		return nil, err
	}
	if q.At != nil {
		var res read.AtResult
		if info.Length > 0 {
			if res, err = read.FoldAt(p.store, k, tm.handlers, info.Length, *q.At); err != nil {
				return nil, err
			}
		}
		if res.Meta.Length == 0 && !m.spec.IsSingleton(k.ID) {
			return nil, notFound()
		}
		return read.AppendAggregate(nil, read.AppendState(nil, res.State), res.Meta), nil
	}
	if info.Length == 0 {
		if !m.spec.IsSingleton(k.ID) {
			return nil, notFound()
		}
		return read.AppendAggregate(nil, []byte("{}"), read.Meta{}), nil
	}
	ent, err := e.state(p, m, tm, k, info, !q.Synchronous)
	if err != nil {
		return nil, err
	}
	return read.AppendAggregate(nil, ent.JSON, read.Meta{Length: info.Length, CreatedAt: info.FirstTimestamp, UpdatedAt: info.LastTimestamp}), nil
}

// state computes the state of k at the length of info: from the cache when allowed and current,
// else from the latest usable snapshot plus the tail, saving a snapshot when one is due.
func (e *Engine) state(p *pair, m *model, tm *typeModel, k storage.StreamKey, info storage.StreamInfo, useCache bool) (cache.Entry, error) {
	ck := cacheKey(p, m, k)
	length := info.Length
	if useCache && tm.cached {
		if ent, ok := e.cache.Get(ck); ok && ent.Length == length && ent.Hash == info.LastHash {
			return ent, nil
		}
	}
	var base tick.Value
	var baseLen uint64
	if length >= snapshotFloor {
		v, l, ok, err := snapshot.Load(p.store, k, tm.fingerprint)
		if err != nil {
			return cache.Entry{}, err
		}
		if ok && l <= length {
			base, baseLen = v, l
		}
	}
	v, err := read.Fold(p.store, k, tm.handlers, base, baseLen, length)
	if err != nil {
		return cache.Entry{}, err
	}
	ent := cache.Entry{Length: length, Hash: info.LastHash, State: v, JSON: read.AppendState(nil, v)}
	if e.policy.Due(baseLen, length) {
		if err := snapshot.Save(p.store, k, tm.fingerprint, length, ent.JSON); err != nil {
			// A snapshot only saves work; the answer stands without it.
			e.log.Warn("cannot save snapshot", slog.String("stream", k.String()), slog.Any("err", err))
		}
	}
	if tm.cached {
		e.cache.Put(ck, ent)
	}
	return ent, nil
}

func cacheKey(p *pair, m *model, k storage.StreamKey) string {
	return p.prefix + strconv.FormatUint(m.gen, 10) + "\x00" + k.Type + "\x00" + k.ID
}

// Length answers GET /{type}/{id}/length.
func (e *Engine) Length(t Target, typ, id string) ([]byte, error) {
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return nil, err
	}
	n, err := p.store.Length(k)
	if err != nil {
		return nil, err
	}
	return read.AppendLength(nil, n), nil
}

// MaxEventsPage is the most events one GET /{type}/{id}/events returns.
const MaxEventsPage = 1000

// Events answers GET /{type}/{id}/events: up to count events after the stream id start
// (exclusive; the zero id starts at the beginning).
func (e *Engine) Events(t Target, typ, id string, start storage.StreamID, count int) ([]byte, error) {
	p, m, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return nil, err
	}
	n, err := p.store.Length(k)
	if err != nil {
		return nil, err
	}
	if n == 0 && !m.spec.IsSingleton(k.ID) {
		return nil, notFound()
	}
	evs, err := p.store.Events(k, start, min(count, MaxEventsPage))
	if err != nil {
		return nil, err
	}
	return read.AppendEvents(nil, evs), nil
}

// MaxListPage is the most ids one GET /{type} returns.
const MaxListPage = 200

// List answers GET /{type}.
func (e *Engine) List(t Target, typ string, q ListQuery) ([]byte, error) {
	p, m, tm, _, err := e.aggregate(t, typ, "")
	if err != nil {
		return nil, err
	}
	limit := min(q.Limit, MaxListPage)
	ids, err := p.store.List(typ, q.Cursor, limit+1)
	if err != nil {
		return nil, err
	}
	cursor := ""
	if len(ids) > limit {
		ids = ids[:limit]
		cursor = ids[limit-1]
	}
	if !q.Resolve {
		return read.AppendIDs(nil, ids, cursor), nil
	}
	items := make([][]byte, 0, len(ids))
	for _, id := range ids {
		k := storage.StreamKey{Type: typ, ID: id}
		info, err := p.store.Info(k)
		if err != nil {
			return nil, err
		}
		ent, err := e.state(p, m, tm, k, info, !q.Synchronous)
		if err != nil {
			return nil, err
		}
		items = append(items, read.AppendResolved(nil, id, ent.JSON, read.Meta{Length: info.Length, CreatedAt: info.FirstTimestamp, UpdatedAt: info.LastTimestamp}))
	}
	return read.AppendList(nil, items, cursor), nil
}
