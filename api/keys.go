package api

import (
	"errors"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// keyJSON is a key as the control plane shows it; secret is set only in the answer that creates
// the key.
func keyJSON(k control.Key, secret string) map[string]any {
	m := map[string]any{
		"ok": true, "id": k.ID, "instance_id": k.InstanceID, "name": k.Name, "scope": k.Scope,
		"environment": k.Environment, "prefix": k.Prefix, "created_at": k.CreatedAt.Format(time.RFC3339),
	}
	if secret != "" {
		m["key"] = secret
	}
	if k.RevokeAt != nil {
		m["revoke_at"] = k.RevokeAt.Format(time.RFC3339)
	}
	if k.RevokedAt != nil {
		m["revoked_at"] = k.RevokedAt.Format(time.RFC3339)
	}
	if k.ReplacedBy != "" {
		m["replaced_by"] = k.ReplacedBy
	}
	return m
}

func (s *Server) createKey(r *Request) error {
	inst, err := s.instance(r)
	if err != nil {
		return err
	}
	var body struct {
		Name        *string `json:"name"`
		Scope       *string `json:"scope"`
		Environment *string `json:"environment"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	if err := require(body.Name, "name"); err != nil {
		return err
	}
	if err := require(body.Scope, "scope"); err != nil {
		return err
	}
	if *body.Scope != control.ScopeRead && *body.Scope != control.ScopeWrite {
		return fieldProblem(ErrValidation, "scope", "Unknown scope %q (use read or write)", *body.Scope)
	}
	env, err := environment(body.Environment, "environment")
	if err != nil {
		return err
	}
	k, secret, err := s.ctl.CreateKey(inst.ID, *body.Name, *body.Scope, env)
	if err != nil {
		return err
	}
	s.log.Info("key created", "instance", inst.Name, "environment", env, "key_id", k.ID, "scope", k.Scope)
	writeJSON(r.Ctx, fasthttp.StatusCreated, keyJSON(k, secret))
	return nil
}

func (s *Server) listKeys(r *Request) error {
	inst, err := s.instance(r)
	if err != nil {
		return err
	}
	keys, err := s.ctl.Keys(inst.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	data := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		m := keyJSON(k, "")
		delete(m, "ok")
		m["active"] = !k.Revoked(now)
		data = append(data, m)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": data})
	return nil
}

// keyError gives the control store's key errors their envelope.
func keyError(id string, err error) error {
	switch {
	case errors.Is(err, control.ErrNotFound):
		return problem(ErrNotFound, "Key %q not found", id)
	case errors.Is(err, control.ErrKeyRevoked):
		return problem(ErrConflict, "Key %q is already revoked", id)
	}
	return err
}

func (s *Server) rotateKey(r *Request) error {
	id := r.Param("key_id")
	k, secret, err := s.ctl.RotateKey(id)
	if err != nil {
		return keyError(id, err)
	}
	s.log.Info("key rotated", "key_id", id, "new_key_id", k.ID)
	writeJSON(r.Ctx, fasthttp.StatusCreated, keyJSON(k, secret))
	return nil
}

func (s *Server) scheduleRevocation(r *Request) error {
	id := r.Param("key_id")
	var body struct {
		RevokeAt *string `json:"revoke_at"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	if err := require(body.RevokeAt, "revoke_at"); err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339, *body.RevokeAt)
	if err != nil {
		return fieldProblem(ErrValidation, "revoke_at", "Field \"revoke_at\" must be an RFC 3339 time such as 2024-02-01T00:00:00Z, not %q", *body.RevokeAt)
	}
	k, err := s.ctl.ScheduleRevocation(id, at)
	if err != nil {
		return keyError(id, err)
	}
	s.log.Info("key revocation scheduled", "key_id", id, "revoke_at", k.RevokeAt)
	writeJSON(r.Ctx, fasthttp.StatusOK, keyJSON(k, ""))
	return nil
}

func (s *Server) revokeKey(r *Request) error {
	id := r.Param("key_id")
	k, err := s.ctl.RevokeKey(id)
	if err != nil {
		return keyError(id, err)
	}
	s.log.Info("key revoked", "key_id", id)
	writeJSON(r.Ctx, fasthttp.StatusOK, keyJSON(k, ""))
	return nil
}
