package api

import (
	"errors"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// getError answers the ops route errors/:error_id: a recorded server error of the principal's
// (instance, environment).
func (s *Server) getError(r *Request) error {
	p := r.Principal
	id := r.Param("error_id")
	rec, err := s.ctl.ErrorRecord(p.InstanceID, p.Environment, id)
	if errors.Is(err, control.ErrNotFound) {
		return problem(ErrNotFound, "Error %q not found in %s/%s", id, p.InstanceName, p.Environment)
	}
	if err != nil {
		return err
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{
		"ok": true, "error_id": rec.ID, "request_id": rec.RequestID, "instance_id": rec.InstanceID,
		"environment": rec.Environment, "method": rec.Method, "path": rec.Path, "status": rec.Status,
		"message": rec.Message, "stack": rec.Stack, "time": rec.Time.Format(time.RFC3339Nano),
	})
	return nil
}
