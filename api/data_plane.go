package api

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// serveData runs the data-plane chain: route, authenticate, rate-limit, check scope, handle.
func (s *Server) serveData(r *Request, path string) error {
	h, err := route(&s.dataRoutes, r, path)
	if err != nil {
		return err
	}
	p, authErr := s.authenticateData(r)
	if authErr != nil {
		// Failed attempts spend the client's IP tokens, which bounds key guessing.
		if v, limited := s.limitIP(r); limited {
			return rateLimited(r, v)
		}
		return authErr
	}
	r.Principal = p
	if !p.IsOperator() {
		if err := s.limit(r, p); err != nil {
			return err
		}
	}
	if isWrite(r.Ctx) && p.Scope != control.ScopeWrite {
		return problem(ErrForbidden, "Read-only key cannot write events")
	}
	return h(r)
}

func isWrite(ctx *fasthttp.RequestCtx) bool {
	return ctx.IsPost() || ctx.IsPut() || ctx.IsPatch() || ctx.IsDelete()
}

// bearer returns the credentials of the Authorization header.
func bearer(ctx *fasthttp.RequestCtx) (string, bool) {
	h := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
	const scheme = "bearer "
	if len(h) <= len(scheme) || !bytes.EqualFold(h[:len(scheme)], []byte(scheme)) {
		return "", false
	}
	return strings.TrimSpace(string(h[len(scheme):])), true
}

// authenticateData identifies the principal of a data-plane request: an API key, or an operator
// token with the instance and environment headers (or host).
func (s *Server) authenticateData(r *Request) (Principal, error) {
	cred, ok := bearer(r.Ctx)
	if !ok {
		return Principal{}, problem(ErrUnauthorized, "Missing API key")
	}
	target, routed := s.targetOfHost(r.Ctx.Host())
	if strings.HasPrefix(cred, "j17_") {
		return s.authenticateKey(cred, target, routed)
	}
	if strings.Count(cred, ".") != 2 {
		return Principal{}, problem(ErrUnauthorized, "Invalid API key")
	}
	return s.authenticateOperatorData(r, cred, target, routed)
}

func (s *Server) authenticateKey(secret string, target hostTarget, routed bool) (Principal, error) {
	key, inst, err := s.ctl.ResolveKey(secret)
	switch {
	case errors.Is(err, control.ErrKeyRevoked):
		return Principal{}, problem(ErrUnauthorized, "API key has been revoked")
	case errors.Is(err, control.ErrKeyMalformed), errors.Is(err, control.ErrKeyUnknown):
		return Principal{}, problem(ErrUnauthorized, "Invalid API key")
	case err != nil:
		return Principal{}, err
	}
	if routed {
		if target.name != inst.Name {
			return Principal{}, problem(ErrForbidden, "API key cannot access instance %q", target.name)
		}
		if target.env != key.Environment {
			return Principal{}, problem(ErrForbidden, "%s key cannot access %s", envTitle(key.Environment, true), envTitle(target.env, false))
		}
	}
	return Principal{
		InstanceID: inst.ID, InstanceName: inst.Name, Environment: key.Environment,
		Scope: key.Scope, KeyID: key.ID,
	}, nil
}

// authenticateOperatorData admits an operator to the data plane of the instance and environment
// named by the X-J17-Instance and X-J17-Environment headers, or by the host.
func (s *Server) authenticateOperatorData(r *Request, token string, target hostTarget, routed bool) (Principal, error) {
	op, err := s.operator(token)
	if err != nil {
		return Principal{}, err
	}
	ref := string(r.Ctx.Request.Header.Peek("X-J17-Instance"))
	env := string(r.Ctx.Request.Header.Peek("X-J17-Environment"))
	if routed {
		if env != "" && env != target.env {
			return Principal{}, problem(ErrForbidden, "X-J17-Environment %q does not match the host's environment %q", env, target.env)
		}
		env = target.env
		if ref == "" {
			ref = target.name
		}
	}
	if ref == "" || env == "" {
		return Principal{}, problem(ErrBadRequest, "Operator requests to the data plane need the X-J17-Instance and X-J17-Environment headers")
	}
	if !control.ValidEnvironment(env) {
		return Principal{}, fieldProblem(ErrBadRequest, "X-J17-Environment", "Unknown environment %q (use prod, staging or test)", env)
	}
	inst, err := s.ctl.Instance(ref)
	if errors.Is(err, control.ErrNotFound) {
		return Principal{}, problem(ErrNotFound, "Instance %q not found", ref)
	}
	if err != nil {
		return Principal{}, err
	}
	if routed && inst.Name != target.name {
		return Principal{}, problem(ErrForbidden, "X-J17-Instance %q does not match the host's instance %q", ref, target.name)
	}
	return Principal{
		InstanceID: inst.ID, InstanceName: inst.Name, Environment: env,
		Scope: control.ScopeWrite, OperatorID: op.ID,
	}, nil
}

// limitIP spends one token of the client IP's bucket and reports whether it was refused.
func (s *Server) limitIP(r *Request) (verdict, bool) {
	if !s.ipLimit.enabled() {
		return verdict{}, false
	}
	v := s.ipLimit.take(r.Ctx.RemoteIP().String())
	setRateHeaders(r.Ctx, v, "ip")
	return v, !v.ok
}

// limit spends one token of the key's bucket and one of the client IP's, and sets the rate-limit
// headers from the tighter of the two.
func (s *Server) limit(r *Request, p Principal) error {
	var kv, iv verdict
	if s.keyLimit.enabled() {
		kv = s.keyLimit.take(p.KeyID)
	}
	if s.ipLimit.enabled() {
		iv = s.ipLimit.take(r.Ctx.RemoteIP().String())
	}
	v, scope := kv, "api-key"
	switch {
	case !s.keyLimit.enabled() && !s.ipLimit.enabled():
		return nil
	case !s.keyLimit.enabled(), s.ipLimit.enabled() && (!iv.ok || kv.ok && iv.remaining < kv.remaining):
		v, scope = iv, "ip"
	}
	setRateHeaders(r.Ctx, v, scope)
	if !v.ok {
		return rateLimited(r, v)
	}
	return nil
}

func setRateHeaders(ctx *fasthttp.RequestCtx, v verdict, scope string) {
	h := &ctx.Response.Header
	h.Set("X-RateLimit-Limit", strconv.Itoa(v.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(v.remaining))
	h.Set("X-RateLimit-Scope", scope)
}

func rateLimited(r *Request, v verdict) error {
	secs := int((v.retryAfter + 999_999_999) / 1_000_000_000)
	if secs < 1 {
		secs = 1
	}
	r.Ctx.Response.Header.Set("Retry-After", strconv.Itoa(secs))
	return &Problem{Err: ErrRateLimited, Message: "Rate limit exceeded", Details: map[string]any{"retry_after": secs}}
}
