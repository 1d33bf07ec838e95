package api

import (
	"strconv"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// registerScheduledRoutes serves the scheduled-event operations at every path the docs give:
// the Scheduled Events page's /_admin/scheduled... (operator JWT with the instance and
// environment headers) and the Admin API page's /ops/:env/scheduled... (and /_internal/...).
func (s *Server) registerScheduledRoutes() {
	s.HandleData(fasthttp.MethodGet, "/_admin/scheduled", operatorData(s.listScheduled))
	s.HandleData(fasthttp.MethodGet, "/_admin/scheduled/dead_letters", operatorData(s.listDeadLetters))
	s.HandleData(fasthttp.MethodDelete, "/_admin/scheduled/:scheduled_id", operatorData(s.cancelScheduled))
	s.HandleData(fasthttp.MethodPost, "/_admin/scheduled/:scheduled_id/retry", operatorData(s.retryScheduled))
	s.HandleData(fasthttp.MethodPost, "/_admin/scheduled/run_due", operatorData(s.runDue))
	s.HandleOps(fasthttp.MethodGet, "/scheduled", s.listScheduled)
	s.HandleOps(fasthttp.MethodGet, "/scheduled/dead", s.listDeadLetters)
	s.HandleOps(fasthttp.MethodPost, "/scheduled/:scheduled_id/cancel", s.cancelScheduled)
	s.HandleOps(fasthttp.MethodPost, "/scheduled/:scheduled_id/retry", s.retryScheduled)
}

// operatorData admits only operators to a data-plane route: the /_admin/... routes act on the
// whole environment, which no API key may do.
func operatorData(h Handler) Handler {
	return func(r *Request) error {
		if !r.Principal.IsOperator() {
			return problem(ErrForbidden, "This route needs an operator token (with X-J17-Instance and X-J17-Environment), not an API key")
		}
		return h(r)
	}
}

func (s *Server) listScheduled(r *Request) error {
	q := engine.ScheduledQuery{Status: string(r.Ctx.QueryArgs().Peek("status"))}
	var err error
	if q.Limit, err = intArg(r, "limit"); err != nil {
		return err
	}
	if q.Offset, err = intArg(r, "offset"); err != nil {
		return err
	}
	body, err := s.engine.Scheduled(target(r), q)
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

func (s *Server) listDeadLetters(r *Request) error {
	r.Ctx.QueryArgs().Set("status", "dead_letter")
	return s.listScheduled(r)
}

func (s *Server) cancelScheduled(r *Request) error {
	body, err := s.engine.CancelScheduled(target(r), r.Param("scheduled_id"))
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

func (s *Server) retryScheduled(r *Request) error {
	body, err := s.engine.RetryScheduled(target(r), r.Param("scheduled_id"))
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

// runDue fires what is due at {"now": unix_seconds}. Production refuses it with 403: firing
// early there would act on live data ahead of time, and the contract offers it only to
// non-production environments.
func (s *Server) runDue(r *Request) error {
	if r.Principal.Environment == control.EnvProd {
		return problem(ErrForbidden, "run_due is available only in non-production environments (staging, test)")
	}
	var in struct {
		Now *int64 `json:"now"`
	}
	if err := decodeBody(r.Ctx, &in); err != nil {
		return err
	}
	if in.Now == nil || *in.Now < 0 {
		return fieldProblem(ErrBadRequest, "now", "Field \"now\" is required: a non-negative integer of Unix seconds")
	}
	body, err := s.engine.RunDue(target(r), time.Unix(*in.Now, 0))
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

func intArg(r *Request, name string) (int, error) {
	raw := r.Ctx.QueryArgs().Peek(name)
	if len(raw) == 0 {
		return 0, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 {
		return 0, fieldProblem(ErrBadRequest, name, "%s must be a non-negative integer", name)
	}
	return n, nil
}
