package api

import (
	"github.com/j17-go/j17/engine"
	"github.com/valyala/fasthttp"
)

// registerSagaRoutes serves the saga operations of the Sagas page at /_admin/sagas... (operator
// JWT with the instance and environment headers) and under the ops and internal prefixes.
func (s *Server) registerSagaRoutes() {
	s.HandleData(fasthttp.MethodGet, "/_admin/sagas", operatorData(s.listSagas))
	s.HandleData(fasthttp.MethodGet, "/_admin/sagas/:saga_id", operatorData(s.getSaga))
	s.HandleData(fasthttp.MethodPost, "/_admin/sagas/:saga_id/retry", operatorData(s.retrySaga))
	s.HandleOps(fasthttp.MethodGet, "/sagas", s.listSagas)
	s.HandleOps(fasthttp.MethodGet, "/sagas/:saga_id", s.getSaga)
	s.HandleOps(fasthttp.MethodPost, "/sagas/:saga_id/retry", s.retrySaga)
}

type sagaAnswer struct {
	OK bool `json:"ok"`
	engine.SagaView
}

func (s *Server) listSagas(r *Request) error {
	q := engine.SagaQuery{Status: string(r.Ctx.QueryArgs().Peek("status"))}
	var err error
	if q.Limit, err = intArg(r, "limit"); err != nil {
		return err
	}
	if q.Offset, err = intArg(r, "offset"); err != nil {
		return err
	}
	list, total, err := s.engine.Sagas(target(r), q)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": list, "total": total})
	return nil
}

func (s *Server) getSaga(r *Request) error {
	v, err := s.engine.Saga(target(r), r.Param("saga_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, sagaAnswer{true, v})
	return nil
}

func (s *Server) retrySaga(r *Request) error {
	v, err := s.engine.RetrySaga(target(r), r.Param("saga_id"))
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, sagaAnswer{true, v})
	return nil
}
