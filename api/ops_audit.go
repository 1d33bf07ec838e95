package api

import (
	"github.com/j17-go/j17/engine/audit"
	"github.com/valyala/fasthttp"
)

// registerOpsAuditRoutes registers the audit and root-anchor operations of the Admin API page,
// served under /api/instances/:id/ops/:env and /_internal/:id/:env.
func (s *Server) registerOpsAuditRoutes() {
	s.HandleOps(fasthttp.MethodGet, "/audit/verify-chain/:aggregate_type/:aggregate_id", s.auditHandler("aggregate_type", "aggregate_id", s.verifyChain))
	s.HandleOps(fasthttp.MethodGet, "/audit/merkle-root/:aggregate_type/:aggregate_id", s.auditHandler("aggregate_type", "aggregate_id", s.merkleRoot))
	s.HandleOps(fasthttp.MethodGet, "/audit/merkle-proof/:aggregate_type/:aggregate_id/:index", s.auditHandler("aggregate_type", "aggregate_id", s.merkleProof))
	s.HandleOps(fasthttp.MethodPost, "/audit/merkle-verify", func(r *Request) error { return s.merkleVerify(r, auditStream{}) })
	s.HandleOps(fasthttp.MethodGet, "/root-anchors", s.listAnchors)
	s.HandleOps(fasthttp.MethodPost, "/root-anchors", s.createAnchor)
	s.HandleOps(fasthttp.MethodGet, "/root-anchors/latest", s.latestAnchor)
	s.HandleOps(fasthttp.MethodGet, "/root-anchors/:anchor_id", s.getAnchor)
	s.HandleOps(fasthttp.MethodDelete, "/root-anchors/:anchor_id", s.deleteAnchor)
	s.HandleOps(fasthttp.MethodPost, "/root-anchors/:anchor_id/verify", s.verifyAnchor)
	s.HandleOps(fasthttp.MethodGet, "/root-anchor-settings", s.getAnchorSettings)
	s.HandleOps(fasthttp.MethodPut, "/root-anchor-settings", s.putAnchorSettings)
}

type anchorAnswer struct {
	OK bool `json:"ok"`
	audit.Anchor
}

func (s *Server) listAnchors(r *Request) error {
	as, err := s.engine.Anchors(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": as})
	return nil
}

func (s *Server) createAnchor(r *Request) error {
	a, err := s.engine.CreateAnchor(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusCreated, anchorAnswer{true, a})
	return nil
}

func (s *Server) latestAnchor(r *Request) error {
	a, err := s.engine.LatestAnchor(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, anchorAnswer{true, a})
	return nil
}

func (s *Server) getAnchor(r *Request) error {
	a, err := s.engine.Anchor(target(r), r.Param("anchor_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, anchorAnswer{true, a})
	return nil
}

func (s *Server) deleteAnchor(r *Request) error {
	id := r.Param("anchor_id")
	if err := s.engine.DeleteAnchor(target(r), id); err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "id": id})
	return nil
}

func (s *Server) verifyAnchor(r *Request) error {
	chk, err := s.engine.VerifyAnchor(target(r), r.Param("anchor_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.AnchorCheck
	}{true, chk})
	return nil
}

func (s *Server) getAnchorSettings(r *Request) error {
	st, err := s.engine.AnchorSettings(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.Settings
	}{true, st})
	return nil
}

func (s *Server) putAnchorSettings(r *Request) error {
	var body struct {
		Enabled         *bool  `json:"enabled"`
		IntervalSeconds *int64 `json:"interval_seconds"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	st, err := s.engine.AnchorSettings(target(r))
	if err != nil {
		return dataError(err)
	}
	if body.Enabled != nil {
		st.Enabled = *body.Enabled
	}
	if body.IntervalSeconds != nil {
		st.IntervalSeconds = *body.IntervalSeconds
	}
	if err := s.engine.SetAnchorSettings(target(r), st); err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.Settings
	}{true, st})
	return nil
}
