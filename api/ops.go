package api

import (
	"crypto/subtle"
	"strings"

	"github.com/j17-go/j17/engine/control"
)

// HandleOps registers an operation on one (instance, environment) at the two addresses the
// contract gives the Admin API's operations: /api/instances/:id/ops/:env<pattern> with the
// operator token, and /_internal/:instance/:env<pattern> with the X-Node-Secret header. The
// handler's Principal names the instance and environment. pattern starts with "/". Register
// every route before Serve.
func (s *Server) HandleOps(method, pattern string, h Handler) {
	s.controlRoutes.add(method, "/api/instances/:id/ops/:env"+pattern, s.operatorOnly(s.opsTarget(h)))
	s.internalRoutes.add(method, "/_internal/:id/:env"+pattern, s.nodeOnly(s.opsTarget(h)))
}

// opsTarget resolves the :id and :env parameters into the request's principal.
func (s *Server) opsTarget(h Handler) Handler {
	return func(r *Request) error {
		inst, err := s.instance(r)
		if err != nil {
			return err
		}
		env := r.Param("env")
		if !control.ValidEnvironment(env) {
			return fieldProblem(ErrNotFound, "env", "Unknown environment %q (use prod, staging or test)", env)
		}
		r.Principal.InstanceID, r.Principal.InstanceName, r.Principal.Environment = inst.ID, inst.Name, env
		r.Principal.Scope = control.ScopeWrite
		return h(r)
	}
}

// isInternalPath tells the node-to-node API's paths.
func isInternalPath(path string) bool {
	return strings.HasPrefix(path, "/_internal/")
}

// serveInternal routes a request of the node-to-node API.
func (s *Server) serveInternal(r *Request, path string) error {
	h, err := route(&s.internalRoutes, r, path)
	if err != nil {
		return err
	}
	return h(r)
}

// nodeOnly wraps an internal handler with node-secret authentication. Without a configured
// secret the internal API refuses everything.
func (s *Server) nodeOnly(h Handler) Handler {
	return func(r *Request) error {
		got := r.Ctx.Request.Header.Peek("X-Node-Secret")
		if len(s.nodeSecret) == 0 || subtle.ConstantTimeCompare(got, s.nodeSecret) != 1 {
			return problem(ErrUnauthorized, "Invalid node secret")
		}
		r.Principal.Node = true
		return h(r)
	}
}
