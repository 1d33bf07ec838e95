package api

import (
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/valyala/fasthttp"
)

func (s *Server) listCheckpoints(r *Request) error {
	cps, err := s.engine.Checkpoints(target(r))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": cps})
	return nil
}

func (s *Server) createCheckpoint(r *Request) error {
	var body struct {
		AggregateType *string `json:"aggregate_type"`
		AggregateID   *string `json:"aggregate_id"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	if err := require(body.AggregateType, "aggregate_type"); err != nil {
		return err
	}
	id := ""
	if body.AggregateID != nil {
		id = *body.AggregateID
		if id == "" {
			return fieldProblem(ErrBadRequest, "aggregate_id", "Field \"aggregate_id\" must not be empty; leave it out for a root checkpoint of the whole type")
		}
	}
	cp, err := s.engine.CreateCheckpoint(target(r), *body.AggregateType, id)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusCreated, struct {
		OK bool `json:"ok"`
		snapshot.Checkpoint
	}{true, cp})
	return nil
}

func (s *Server) restoreCheckpoint(r *Request) error {
	id := r.Param("checkpoint_id")
	n, err := s.engine.RestoreCheckpoint(target(r), id)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "checkpoint_id": id, "restored": n})
	return nil
}

func (s *Server) deleteCheckpoint(r *Request) error {
	id := r.Param("checkpoint_id")
	if err := s.engine.DeleteCheckpoint(target(r), id); err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "checkpoint_id": id})
	return nil
}
