package api

import (
	"strconv"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/storage"
	"github.com/valyala/fasthttp"
)

func (s *Server) readAggregate(r *Request) error {
	args := r.Ctx.QueryArgs()
	var q engine.ReadQuery
	var err error
	if q.Synchronous, err = flag(args, "synchronous"); err != nil {
		return err
	}
	if args.Has("at") {
		at, err := strconv.ParseInt(string(args.Peek("at")), 10, 64)
		if err != nil || at < 0 {
			return fieldProblem(ErrBadRequest, "at", "Query parameter \"at\" must be a non-negative integer (Unix seconds)")
		}
		q.At = &at
	}
	body, err := s.engine.Aggregate(target(r), r.Param("type"), r.Param("id"), q)
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

func (s *Server) readLength(r *Request) error {
	body, err := s.engine.Length(target(r), r.Param("type"), r.Param("id"))
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

// defaultEventsPage is the page size of GET /{type}/{id}/events without count.
const defaultEventsPage = 100

func (s *Server) readEvents(r *Request) error {
	args := r.Ctx.QueryArgs()
	var start storage.StreamID
	if v := args.Peek("start"); len(v) > 0 {
		sid, err := storage.ParseStreamID(string(v))
		if err != nil {
			return fieldProblem(ErrBadRequest, "start", "Query parameter \"start\" must be a stream id like 1705312800123-0")
		}
		start = sid
	}
	count, err := positive(args, "count", defaultEventsPage)
	if err != nil {
		return err
	}
	body, err := s.engine.Events(target(r), r.Param("type"), r.Param("id"), start, count)
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

// defaultListPage is the page size of GET /{type} without limit.
const defaultListPage = 50

func (s *Server) listAggregates(r *Request) error {
	args := r.Ctx.QueryArgs()
	q := engine.ListQuery{Cursor: string(args.Peek("cursor"))}
	var err error
	if q.Limit, err = positive(args, "limit", defaultListPage); err != nil {
		return err
	}
	if q.Resolve, err = flag(args, "resolve"); err != nil {
		return err
	}
	if q.Synchronous, err = flag(args, "synchronous"); err != nil {
		return err
	}
	body, err := s.engine.List(target(r), r.Param("type"), q)
	if err != nil {
		return dataError(err)
	}
	answer(r.Ctx, fasthttp.StatusOK, body)
	return nil
}

// flag reads a boolean query parameter: absent is false; present bare, "true" or "1" is true.
func flag(args *fasthttp.Args, name string) (bool, error) {
	if !args.Has(name) {
		return false, nil
	}
	switch string(args.Peek(name)) {
	case "", "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fieldProblem(ErrBadRequest, name, "Query parameter %q must be true or false", name)
}

// positive reads a positive integer query parameter; def when absent. Values over the route's
// maximum are clamped by the engine.
func positive(args *fasthttp.Args, name string, def int) (int, error) {
	if !args.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(string(args.Peek(name)))
	if err != nil || n < 1 {
		return 0, fieldProblem(ErrBadRequest, name, "Query parameter %q must be a positive integer", name)
	}
	return n, nil
}
