package engine

import (
	"errors"
	"fmt"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/tick"
)

// model is one deployed spec compiled for the data plane. It is never modified once published.
type model struct {
	spec    *spec.Spec
	version int
	rules   ident.Rules
	types   map[string]*typeModel
	// gen distinguishes the cache entries of successive models of a pair.
	gen uint64
}

// typeModel is what reads of one aggregate type need.
type typeModel struct {
	handlers    map[string]*tick.Handler
	fingerprint uint64
	cached      bool
}

func newModel(sp *spec.Spec, version int, gen uint64) *model {
	m := &model{spec: sp, version: version, rules: ident.NewRules(sp.Singletons()), types: map[string]*typeModel{}, gen: gen}
	fps := snapshot.Fingerprints(sp.Document())
	for _, name := range sp.AggregateTypes() {
		agg, _ := sp.Aggregate(name)
		hs := map[string]*tick.Handler{}
		for t, ev := range agg.Events {
			if ev.Handler != nil {
				hs[t] = ev.Handler
			}
		}
		m.types[name] = &typeModel{handlers: hs, fingerprint: fps[name], cached: sp.Cached(name)}
	}
	return m
}

// loadModel reads and compiles the current spec of t; nil when none is deployed.
func (e *Engine) loadModel(t Target) (*model, error) {
	sv, err := e.opts.Control.Spec(t.Instance, t.Environment, 0)
	if errors.Is(err, control.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine: spec of %s/%s: %w", t.Instance, t.Environment, err)
	}
	sp, report := spec.Load(sv.Document)
	if !report.OK() {
		return nil, fmt.Errorf("engine: deployed spec version %d of %s/%s no longer loads: %w", sv.Version, t.Instance, t.Environment, report.Err())
	}
	return newModel(sp, sv.Version, e.nextGen()), nil
}

func (e *Engine) nextGen() uint64 { return e.seq.Add(1) }

// SpecDeployed makes sp, deployed as version of t, the spec of every later request of t, and
// drops t's cached states. A version older than the one held is ignored, so a late call never
// undoes a newer deploy. A pair not yet open loads its spec when it opens.
func (e *Engine) SpecDeployed(t Target, version int, sp *spec.Spec) {
	e.mu.RLock()
	p := e.pairs[t]
	e.mu.RUnlock()
	if p == nil {
		return
	}
	next := newModel(sp, version, e.nextGen())
	for {
		cur := p.model.Load()
		if cur != nil && cur.version >= version {
			return
		}
		if p.model.CompareAndSwap(cur, next) {
			break
		}
	}
	e.cache.DeletePrefix(p.prefix)
}
