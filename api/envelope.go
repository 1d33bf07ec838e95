package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/j17-go/j17/engine/control"
	engineproblem "github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/valyala/fasthttp"
)

// statusTable maps sentinel errors to the status and code of the error envelope. It is the only
// place where an error becomes a status code; data-plane packages add their sentinels here. The
// first row whose error matches (errors.Is) wins; an error matching no row is a 500.
var statusTable = []struct {
	err    error
	status int
	code   string
}{
	{ErrBadRequest, fasthttp.StatusBadRequest, "bad_request"},
	{ErrUnauthorized, fasthttp.StatusUnauthorized, "unauthorized"},
	{ErrForbidden, fasthttp.StatusForbidden, "forbidden"},
	{ErrNotFound, fasthttp.StatusNotFound, "not_found"},
	{ErrMethodNotAllowed, fasthttp.StatusMethodNotAllowed, "method_not_allowed"},
	{ErrConflict, fasthttp.StatusConflict, "conflict"},
	{ErrBodyTooLarge, fasthttp.StatusRequestEntityTooLarge, "payload_too_large"},
	{ErrValidation, fasthttp.StatusUnprocessableEntity, "validation_failed"},
	{ErrRateLimited, fasthttp.StatusTooManyRequests, "rate_limited"},

	{engineproblem.ErrMalformed, fasthttp.StatusBadRequest, "bad_request"},
	{engineproblem.ErrInvalid, fasthttp.StatusUnprocessableEntity, "validation_failed"},
	{engineproblem.ErrNotFound, fasthttp.StatusNotFound, "not_found"},
	{engineproblem.ErrConflict, fasthttp.StatusConflict, "conflict"},
	{snapshot.ErrCheckpointNotFound, fasthttp.StatusNotFound, "not_found"},
	{snapshot.ErrStale, fasthttp.StatusUnprocessableEntity, "validation_failed"},

	{control.ErrNotFound, fasthttp.StatusNotFound, "not_found"},
	{control.ErrNameTaken, fasthttp.StatusConflict, "conflict"},
	{control.ErrEmailTaken, fasthttp.StatusConflict, "conflict"},
	{control.ErrInvalidName, fasthttp.StatusUnprocessableEntity, "validation_failed"},
	{control.ErrInvalidEnvironment, fasthttp.StatusUnprocessableEntity, "validation_failed"},
	{control.ErrInvalidScope, fasthttp.StatusUnprocessableEntity, "validation_failed"},
	{control.ErrBadCredentials, fasthttp.StatusUnauthorized, "unauthorized"},
	{control.ErrKeyMalformed, fasthttp.StatusUnauthorized, "unauthorized"},
	{control.ErrKeyUnknown, fasthttp.StatusUnauthorized, "unauthorized"},
	{control.ErrKeyRevoked, fasthttp.StatusUnauthorized, "unauthorized"},
}

// Problem is an error that carries the whole error envelope. Handlers return one where the
// message, path or details matter; Err selects the status and code through statusTable.
type Problem struct {
	Err        error
	Message    string
	Path       string
	EventIndex *int
	Details    any
	// Errors lists several problems of one request (a spec deploy).
	Errors []FieldError
}

// FieldError is one entry of a Problem's error list.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func (p *Problem) Error() string {
	if p.Path != "" {
		return p.Message + " (" + p.Path + ")"
	}
	return p.Message
}

func (p *Problem) Unwrap() error { return p.Err }

// problem builds a Problem of kind err with a formatted human message.
func problem(err error, format string, args ...any) *Problem {
	return &Problem{Err: err, Message: fmt.Sprintf(format, args...)}
}

// fieldProblem builds a Problem about one field of the request body.
func fieldProblem(err error, path, format string, args ...any) *Problem {
	return &Problem{Err: err, Path: path, Message: fmt.Sprintf(format, args...)}
}

type envelope struct {
	OK         bool         `json:"ok"`
	Error      string       `json:"error"`
	Code       string       `json:"code"`
	Path       string       `json:"path,omitempty"`
	EventIndex *int         `json:"event_index,omitempty"`
	Details    any          `json:"details,omitempty"`
	Errors     []FieldError `json:"errors,omitempty"`
	ErrorID    string       `json:"error_id,omitempty"`
}

// classify finds the status and code of err.
func classify(err error) (int, string) {
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			return row.status, row.code
		}
	}
	return fasthttp.StatusInternalServerError, "internal_error"
}

// fail answers r with the error envelope of err. A 5xx gets an error id (header X-Error-Id), a
// log line and a record in the control store; its message never reveals internals.
func (s *Server) fail(r *Request, err error) {
	status, code := classify(err)
	env := envelope{Error: err.Error(), Code: code}
	var p *Problem
	if errors.As(err, &p) {
		env.Error, env.Path, env.EventIndex, env.Details, env.Errors = p.Message, p.Path, p.EventIndex, p.Details, p.Errors
	}
	if status >= 500 {
		env.Error = "Internal server error"
		env.ErrorID = s.recordError(r, status, err.Error(), "")
	}
	if status == fasthttp.StatusMethodNotAllowed && r.allow != "" {
		r.Ctx.Response.Header.Set("Allow", r.allow)
	}
	writeJSON(r.Ctx, status, env)
}

// recordError logs a server error and stores it for lookup; it returns the error id.
func (s *Server) recordError(r *Request, status int, message, stack string) string {
	id := newID()
	r.Ctx.Response.Header.Set("X-Error-Id", id)
	rec := control.ErrorRecord{
		ID: id, InstanceID: r.Principal.InstanceID, Environment: r.Principal.Environment,
		RequestID: r.RequestID, Method: string(r.Ctx.Method()), Path: string(r.Ctx.Path()),
		Status: status, Message: message, Stack: stack,
	}
	s.log.Error("request failed", slog.String("error_id", id), slog.String("request_id", r.RequestID),
		slog.String("method", rec.Method), slog.String("path", rec.Path), slog.Int("status", status),
		slog.String("error", message))
	if err := s.ctl.RecordError(rec); err != nil {
		s.log.Error("cannot record error", slog.String("error_id", id), slog.Any("err", err))
	}
	return id
}

// recoverPanic turns a panic of the request into a 500 with an error id. The stack goes to the
// log at debug level and to the stored error record, never to the client.
func (s *Server) recoverPanic(r *Request) {
	v := recover()
	if v == nil {
		return
	}
	stack := string(debug.Stack())
	s.log.Debug("panic stack", slog.String("request_id", r.RequestID), slog.String("stack", stack))
	r.Ctx.Response.Reset()
	setCommonHeaders(r.Ctx, r.RequestID)
	id := s.recordError(r, fasthttp.StatusInternalServerError, fmt.Sprintf("panic: %v", v), stack)
	writeJSON(r.Ctx, fasthttp.StatusInternalServerError, envelope{Error: "Internal server error", Code: "internal_error", ErrorID: id})
}

// WriteJSON answers ctx with status and the JSON encoding of v.
func WriteJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	writeJSON(ctx, status, v)
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	buf, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot encode response %T: %v", v, err))
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(buf)
}
