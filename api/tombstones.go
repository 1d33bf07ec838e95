package api

import (
	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/valyala/fasthttp"
)

// registerTombstoneRoutes registers the tombstone operations of the Admin API page under the
// ops and internal prefixes.
func (s *Server) registerTombstoneRoutes() {
	s.HandleOps(fasthttp.MethodPost, "/tombstone/:aggregate_type/:aggregate_id", s.createTombstone)
	s.HandleOps(fasthttp.MethodGet, "/tombstones", s.listTombstones)
	s.HandleOps(fasthttp.MethodGet, "/tombstones/:tombstone_id", s.getTombstone)
	s.HandleOps(fasthttp.MethodDelete, "/tombstones/:tombstone_id", s.cancelTombstone)
	s.HandleOps(fasthttp.MethodPost, "/tombstones/:tombstone_id/execute", s.executeTombstone)
}

type tombstoneAnswer struct {
	OK bool `json:"ok"`
	tombstone.Tombstone
}

func (s *Server) createTombstone(r *Request) error {
	var body struct {
		LegalBasis      string `json:"legal_basis"`
		RequestID       string `json:"request_id"`
		RequestedBy     string `json:"requested_by"`
		GracePeriodDays int    `json:"grace_period_days"`
	}
	if len(r.Ctx.PostBody()) > 0 {
		if err := decodeBody(r.Ctx, &body); err != nil {
			return err
		}
	}
	if body.GracePeriodDays < 0 {
		return fieldProblem(ErrBadRequest, "grace_period_days", "Field \"grace_period_days\" must not be negative")
	}
	ts, err := s.engine.CreateTombstone(target(r), r.Param("aggregate_type"), r.Param("aggregate_id"), tombstone.Request{
		LegalBasis: body.LegalBasis, RequestID: body.RequestID, RequestedBy: body.RequestedBy, GracePeriodDays: body.GracePeriodDays,
	})
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusCreated, tombstoneAnswer{true, ts})
	return nil
}

func (s *Server) listTombstones(r *Request) error {
	ts, err := s.engine.Tombstones(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": ts, "total": len(ts)})
	return nil
}

func (s *Server) getTombstone(r *Request) error {
	ts, err := s.engine.Tombstone(target(r), r.Param("tombstone_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, tombstoneAnswer{true, ts})
	return nil
}

func (s *Server) cancelTombstone(r *Request) error {
	ts, err := s.engine.CancelTombstone(target(r), r.Param("tombstone_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, tombstoneAnswer{true, ts})
	return nil
}

// executeTombstone takes force from the query (?force=true) or the body ({"force": true}).
func (s *Server) executeTombstone(r *Request) error {
	var body struct {
		Force bool `json:"force"`
	}
	if len(r.Ctx.PostBody()) > 0 {
		if err := decodeBody(r.Ctx, &body); err != nil {
			return err
		}
	}
	force := body.Force || string(r.Ctx.QueryArgs().Peek("force")) == "true"
	ts, err := s.engine.ExecuteTombstone(target(r), r.Param("tombstone_id"), engine.TombstoneExecution{Force: force})
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, tombstoneAnswer{true, ts})
	return nil
}
