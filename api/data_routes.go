package api

import (
	"errors"

	"github.com/j17-go/j17/engine"
	engineproblem "github.com/j17-go/j17/engine/problem"
	"github.com/valyala/fasthttp"
)

// dataRoutes registers the event routes of the data plane (Writing Events, Batch Operations,
// Reading Aggregates) and the checkpoint operations of the Admin API, all served by the engine.
func (s *Server) registerDataRoutes() {
	s.HandleData(fasthttp.MethodPost, "/:type/:id/:event", s.writeEvent)
	s.HandleData(fasthttp.MethodPost, "/:type/:id", s.writeBatch)
	s.HandleData(fasthttp.MethodGet, "/:type/:id", s.readAggregate)
	s.HandleData(fasthttp.MethodGet, "/:type/:id/length", s.readLength)
	s.HandleData(fasthttp.MethodGet, "/:type/:id/events", s.readEvents)
	s.HandleData(fasthttp.MethodGet, "/:type", s.listAggregates)
	s.HandleOps(fasthttp.MethodGet, "/checkpoints", s.listCheckpoints)
	s.HandleOps(fasthttp.MethodPost, "/checkpoints", s.createCheckpoint)
	s.HandleOps(fasthttp.MethodPost, "/checkpoints/:checkpoint_id/restore", s.restoreCheckpoint)
	s.HandleOps(fasthttp.MethodDelete, "/checkpoints/:checkpoint_id", s.deleteCheckpoint)
	s.registerAuditRoutes()
	s.registerTombstoneRoutes()
	s.registerScheduledRoutes()
	s.registerSagaRoutes()
}

func target(r *Request) engine.Target {
	return engine.Target{Instance: r.Principal.InstanceID, Environment: r.Principal.Environment}
}

// dataError carries an engine refusal into the envelope: its message, path, batch index and
// details, with its kind choosing the status through statusTable.
func dataError(err error) error {
	var pe *engineproblem.Error
	if !errors.As(err, &pe) {
		return err
	}
	return &Problem{Err: err, Message: pe.Message, Path: pe.Path, EventIndex: pe.EventIndex, Details: pe.Details}
}

// answer sends a body the engine encoded.
func answer(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
