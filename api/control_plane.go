package api

import (
	"errors"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// routes registers the control-plane routes.
func (s *Server) routes() {
	c := &s.controlRoutes
	c.add(fasthttp.MethodGet, "/healthz", s.healthz)
	c.add(fasthttp.MethodPost, "/api/login", s.login)
	c.add(fasthttp.MethodPost, "/api/instances", s.operatorOnly(s.createInstance))
	c.add(fasthttp.MethodGet, "/api/instances", s.operatorOnly(s.listInstances))
	c.add(fasthttp.MethodGet, "/api/instances/:id", s.operatorOnly(s.getInstance))
	c.add(fasthttp.MethodPost, "/api/instances/:id/spec", s.operatorOnly(s.deploySpec))
	c.add(fasthttp.MethodGet, "/api/instances/:id/spec", s.operatorOnly(s.getSpec))
	c.add(fasthttp.MethodPost, "/api/instances/:id/keys", s.operatorOnly(s.createKey))
	c.add(fasthttp.MethodGet, "/api/instances/:id/keys", s.operatorOnly(s.listKeys))
	c.add(fasthttp.MethodPost, "/api/keys/:key_id/rotate", s.operatorOnly(s.rotateKey))
	c.add(fasthttp.MethodPost, "/api/keys/:key_id/schedule_revocation", s.operatorOnly(s.scheduleRevocation))
	c.add(fasthttp.MethodDelete, "/api/keys/:key_id", s.operatorOnly(s.revokeKey))
	s.HandleOps(fasthttp.MethodGet, "/errors/:error_id", s.getError)
}

// serveControl routes a control-plane request.
func (s *Server) serveControl(r *Request, path string) error {
	h, err := route(&s.controlRoutes, r, path)
	if err != nil {
		return err
	}
	return h(r)
}

// operatorOnly wraps a control-plane handler with operator authentication.
func (s *Server) operatorOnly(h Handler) Handler {
	return func(r *Request) error {
		cred, ok := bearer(r.Ctx)
		if !ok {
			return problem(ErrUnauthorized, "Missing operator token")
		}
		op, err := s.operator(cred)
		if err != nil {
			return err
		}
		r.Principal = Principal{OperatorID: op.ID, Scope: control.ScopeWrite}
		return h(r)
	}
}

// operator verifies an operator token and returns its operator, who must still exist.
func (s *Server) operator(token string) (control.Operator, error) {
	id, err := s.tokens.verify(token)
	if err != nil {
		return control.Operator{}, err
	}
	op, err := s.ctl.Operator(id)
	if errors.Is(err, control.ErrNotFound) {
		return control.Operator{}, problem(ErrUnauthorized, "Invalid token")
	}
	return op, err
}

// instance resolves the :id parameter (uuid or name).
func (s *Server) instance(r *Request) (control.Instance, error) {
	ref := r.Param("id")
	inst, err := s.ctl.Instance(ref)
	if errors.Is(err, control.ErrNotFound) {
		return inst, problem(ErrNotFound, "Instance %q not found", ref)
	}
	return inst, err
}

func (s *Server) healthz(r *Request) error {
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true})
	return nil
}

func (s *Server) login(r *Request) error {
	var body struct {
		Email    *string `json:"email"`
		Password *string `json:"password"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	if err := require(body.Email, "email"); err != nil {
		return err
	}
	if err := require(body.Password, "password"); err != nil {
		return err
	}
	op, err := s.ctl.Authenticate(*body.Email, *body.Password)
	if errors.Is(err, control.ErrBadCredentials) {
		return problem(ErrUnauthorized, "Invalid email or password")
	}
	if err != nil {
		return err
	}
	token, exp, err := s.tokens.issue(op)
	if err != nil {
		return err
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "token": token, "expires_at": exp.Unix()})
	return nil
}
