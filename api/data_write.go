package api

import (
	"bytes"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/idempotency"
	"github.com/valyala/fasthttp"
)

func (s *Server) writeEvent(r *Request) error {
	return s.write(r, r.Param("event"))
}

func (s *Server) writeBatch(r *Request) error {
	return s.write(r, "")
}

func (s *Server) write(r *Request, eventType string) error {
	if err := jsonContentType(r.Ctx); err != nil {
		return err
	}
	key, hasKey, err := idempotency.ParseHeader(r.Ctx.Request.Header.PeekAll(idempotency.Header))
	if err != nil {
		return &Problem{Err: ErrValidation, Message: err.Error(), Path: idempotency.Header}
	}
	ans, err := s.engine.Write(target(r), engine.WriteInput{
		AggregateType: r.Param("type"), ID: r.Param("id"), EventType: eventType, Body: r.Ctx.PostBody(),
		IdempotencyKey: key, HasKey: hasKey, RequestID: r.RequestID,
	})
	if err != nil {
		return dataError(err)
	}
	if ans.Replayed {
		h := &r.Ctx.Response.Header
		h.Set("X-Idempotency-Replayed", "true")
		h.Set("X-Request-Id", ans.RequestID)
	}
	answer(r.Ctx, ans.Status, ans.Body)
	return nil
}

// jsonContentType refuses a body declared as anything but JSON. A request without the header
// is read as JSON.
func jsonContentType(ctx *fasthttp.RequestCtx) error {
	ct := ctx.Request.Header.ContentType()
	if len(ct) == 0 {
		return nil
	}
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	if asciiJSONType(ct) {
		return nil
	}
	ct = bytes.ToLower(ct)
	if bytes.Equal(ct, []byte("application/json")) || bytes.HasSuffix(ct, []byte("+json")) {
		return nil
	}
	return fieldProblem(ErrBadRequest, "Content-Type", "Content-Type must be application/json, not %q", ct)
}

// asciiJSONType is the test of jsonContentType for an ASCII media type, without the copy that
// lowering it takes; other bytes are left to bytes.ToLower.
func asciiJSONType(ct []byte) bool {
	for _, c := range ct {
		if c >= 0x80 {
			return false
		}
	}
	const suffix = "+json"
	return bytes.EqualFold(ct, []byte("application/json")) ||
		len(ct) >= len(suffix) && bytes.EqualFold(ct[len(ct)-len(suffix):], []byte(suffix))
}
