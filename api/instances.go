package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

func instanceJSON(inst control.Instance) map[string]any {
	return map[string]any{"ok": true, "id": inst.ID, "name": inst.Name, "created_at": inst.CreatedAt.Format(time.RFC3339)}
}

func (s *Server) createInstance(r *Request) error {
	var body struct {
		Name *string `json:"name"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	if err := require(body.Name, "name"); err != nil {
		return err
	}
	if err := control.ValidateName(*body.Name); err != nil {
		return fieldProblem(ErrValidation, "name", "Instance name %q is invalid: use 1 to 63 lowercase letters, digits and inner hyphens, not a UUID, not ending in -staging or -test", *body.Name)
	}
	inst, err := s.ctl.CreateInstance(*body.Name)
	if errors.Is(err, control.ErrNameTaken) {
		return fieldProblem(ErrConflict, "name", "Instance name %q is already taken", *body.Name)
	}
	if err != nil {
		return err
	}
	if err := s.makePairDirs(inst); err != nil {
		return err
	}
	s.log.Info("instance created", "instance", inst.Name, "instance_id", inst.ID)
	writeJSON(r.Ctx, fasthttp.StatusCreated, instanceJSON(inst))
	return nil
}

// makePairDirs creates DATA/<instance-uuid>/<env>/ for every environment, where that pair's
// storage lives.
func (s *Server) makePairDirs(inst control.Instance) error {
	if s.dataDir == "" {
		return nil
	}
	for _, env := range control.Environments {
		if err := os.MkdirAll(filepath.Join(s.dataDir, inst.ID, env), 0o700); err != nil {
			return fmt.Errorf("api: create data directory of %s/%s: %w", inst.Name, env, err)
		}
	}
	return nil
}

func (s *Server) listInstances(r *Request) error {
	all, err := s.ctl.Instances()
	if err != nil {
		return err
	}
	data := make([]map[string]any, 0, len(all))
	for _, inst := range all {
		m := instanceJSON(inst)
		delete(m, "ok")
		data = append(data, m)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{"ok": true, "data": data})
	return nil
}

func (s *Server) getInstance(r *Request) error {
	inst, err := s.instance(r)
	if err != nil {
		return err
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, instanceJSON(inst))
	return nil
}

// environment checks an environment given in a body field or query parameter.
func environment(env *string, field string) (string, error) {
	if err := require(env, field); err != nil {
		return "", err
	}
	if !control.ValidEnvironment(*env) {
		return "", fieldProblem(ErrValidation, field, "Unknown environment %q (use prod, staging or test)", *env)
	}
	return *env, nil
}
