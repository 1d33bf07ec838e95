package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/j17-go/j17/engine/audit"
	"github.com/j17-go/j17/engine/problem"
)

// auditProblem turns the sentinels of package audit into refusals the api can answer.
func auditProblem(err error) error {
	msg := func() string { return strings.TrimPrefix(err.Error(), "audit: ") }
	switch {
	case errors.Is(err, audit.ErrNotFound):
		return problem.New(problem.ErrNotFound, "%s", msg())
	case errors.Is(err, audit.ErrIndexOutOfRange), errors.Is(err, audit.ErrInvalid):
		return problem.New(problem.ErrInvalid, "%s", msg())
	}
	return err
}

// VerifyChain answers GET /{type}/{id}/audit/verify-chain.
func (e *Engine) VerifyChain(t Target, typ, id string) (audit.ChainReport, error) {
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return audit.ChainReport{}, err
	}
	rep, err := audit.VerifyChain(p.store, k)
	return rep, auditProblem(err)
}

// MerkleRoot answers GET /{type}/{id}/audit/merkle-root.
func (e *Engine) MerkleRoot(t Target, typ, id string) (audit.RootReport, error) {
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return audit.RootReport{}, err
	}
	rep, err := audit.Root(p.store, k)
	return rep, auditProblem(err)
}

// MerkleProof answers GET /{type}/{id}/audit/merkle-proof/{index}, index 0-based.
func (e *Engine) MerkleProof(t Target, typ, id string, index int) (audit.Proof, error) {
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return audit.Proof{}, err
	}
	pr, err := audit.ProveEvent(p.store, k, index)
	return pr, auditProblem(err)
}

// MerkleVerify answers POST .../audit/merkle-verify. With a type and id the proof must also lead
// to that stream's root over its first tree_size events; without, it is checked on its own.
func (e *Engine) MerkleVerify(t Target, typ, id string, pr audit.Proof) (audit.Verdict, error) {
	if typ == "" {
		return audit.VerifyProof(pr), nil
	}
	p, _, _, k, err := e.aggregate(t, typ, id)
	if err != nil {
		return audit.Verdict{}, err
	}
	v, err := audit.VerifyProofFor(p.store, k, pr)
	return v, auditProblem(err)
}

// anchoredTypes are the aggregate types a root anchor covers: those of the deployed spec.
func (p *pair) anchoredTypes() []string {
	if m := p.model.Load(); m != nil {
		return m.spec.AggregateTypes()
	}
	return nil
}

// CreateAnchor computes and stores a root anchor over every stream of t.
func (e *Engine) CreateAnchor(t Target) (audit.Anchor, error) {
	p, err := e.open(t)
	if err != nil {
		return audit.Anchor{}, err
	}
	a, err := audit.CreateAnchor(p.store, e.clock.Now(), p.anchoredTypes(), false)
	return a, auditProblem(err)
}

// Anchors lists the root anchors of t, oldest first, without their streams.
func (e *Engine) Anchors(t Target) ([]audit.Anchor, error) {
	p, err := e.open(t)
	if err != nil {
		return nil, err
	}
	return audit.Anchors(p.store)
}

// Anchor returns one root anchor with its streams.
func (e *Engine) Anchor(t Target, id string) (audit.Anchor, error) {
	p, err := e.open(t)
	if err != nil {
		return audit.Anchor{}, err
	}
	a, err := audit.GetAnchor(p.store, id)
	return a, auditProblem(err)
}

// LatestAnchor returns the newest root anchor of t with its streams.
func (e *Engine) LatestAnchor(t Target) (audit.Anchor, error) {
	p, err := e.open(t)
	if err != nil {
		return audit.Anchor{}, err
	}
	a, err := audit.LatestAnchor(p.store)
	return a, auditProblem(err)
}

// DeleteAnchor removes a root anchor.
func (e *Engine) DeleteAnchor(t Target, id string) error {
	p, err := e.open(t)
	if err != nil {
		return err
	}
	return auditProblem(audit.DeleteAnchor(p.store, id))
}

// VerifyAnchor checks a root anchor against the current log and names every stream changed
// since, tombstoned or otherwise.
func (e *Engine) VerifyAnchor(t Target, id string) (audit.AnchorCheck, error) {
	p, err := e.open(t)
	if err != nil {
		return audit.AnchorCheck{}, err
	}
	a, err := audit.GetAnchor(p.store, id)
	if err != nil {
		return audit.AnchorCheck{}, auditProblem(err)
	}
	chk, err := audit.VerifyAnchor(p.store, a)
	return chk, auditProblem(err)
}

// AnchorSettings returns the auto-anchor settings of t.
func (e *Engine) AnchorSettings(t Target) (audit.Settings, error) {
	p, err := e.open(t)
	if err != nil {
		return audit.Settings{}, err
	}
	return audit.GetSettings(p.store)
}

// SetAnchorSettings saves the auto-anchor settings of t.
func (e *Engine) SetAnchorSettings(t Target, s audit.Settings) error {
	p, err := e.open(t)
	if err != nil {
		return err
	}
	return auditProblem(audit.PutSettings(p.store, s))
}

// AnchorIfDue creates an automatic root anchor of t when its settings make one due; created
// says whether it did. A server calls it periodically for every open target.
func (e *Engine) AnchorIfDue(t Target) (a audit.Anchor, created bool, err error) {
	p, err := e.open(t)
	if err != nil {
		return audit.Anchor{}, false, err
	}
	s, err := audit.GetSettings(p.store)
	if err != nil {
		return audit.Anchor{}, false, err
	}
	var latest audit.Anchor
	if as, err := audit.Anchors(p.store); err != nil {
		return audit.Anchor{}, false, err
	} else if len(as) > 0 {
		latest = as[len(as)-1]
	}
	now := e.clock.Now()
	if !s.Due(latest.CreatedAt, now) {
		return audit.Anchor{}, false, nil
	}
	a, err = audit.CreateAnchor(p.store, now, p.anchoredTypes(), true)
	return a, err == nil, auditProblem(err)
}

// RunAutoAnchors creates the due automatic root anchors of every open target each period, until
// ctx ends. A server runs it in its own goroutine; failures are logged and retried next period.
func (e *Engine) RunAutoAnchors(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			e.autoAnchorOnce()
		}
	}
}

// autoAnchorOnce creates the due automatic anchors of every open target.
func (e *Engine) autoAnchorOnce() {
	e.mu.RLock()
	targets := make([]Target, 0, len(e.pairs))
	for t := range e.pairs {
		targets = append(targets, t)
	}
	e.mu.RUnlock()
	for _, t := range targets {
		if a, created, err := e.AnchorIfDue(t); err != nil {
			e.log.Warn("automatic root anchor failed", "instance", t.Instance, "environment", t.Environment, "err", err)
		} else if created {
			e.log.Info("automatic root anchor", "instance", t.Instance, "environment", t.Environment, "anchor_id", a.ID, "streams", a.StreamCount)
		}
	}
}
