package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/spec"
	"github.com/valyala/fasthttp"
)

// issueErrors turns spec issues into the error list of a 422. Paths are JSON Pointers into the
// uploaded spec value, and lines and columns count within it.
func issueErrors(issues []spec.Issue) []FieldError {
	out := make([]FieldError, len(issues))
	for i, is := range issues {
		path := is.Pointer
		if path == "" {
			path = "/"
		}
		out[i] = FieldError{Path: path, Message: is.Message, Line: is.Line, Column: is.Column}
	}
	return out
}

func issueMessages(issues []spec.Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = is.String()
	}
	return out
}

func (s *Server) deploySpec(r *Request) error {
	inst, err := s.instance(r)
	if err != nil {
		return err
	}
	var body struct {
		Environment *string         `json:"environment"`
		Spec        json.RawMessage `json:"spec"`
		Force       *bool           `json:"force"`
	}
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	env, err := environment(body.Environment, "environment")
	if err != nil {
		return err
	}
	if len(body.Spec) == 0 || bytes.Equal(body.Spec, []byte("null")) {
		return fieldProblem(ErrBadRequest, "spec", "Field \"spec\" is required (the spec document)")
	}
	next, report := spec.Load(body.Spec)
	if !report.OK() {
		return &Problem{Err: ErrValidation, Message: "Spec is invalid", Path: "spec", Errors: issueErrors(report.Errors)}
	}
	force := body.Force != nil && *body.Force
	prod := env == control.EnvProd
	version, err := s.ctl.DeploySpec(inst.ID, env, r.Principal.OperatorID, func(prev *control.SpecVersion) ([]byte, error) {
		if prev == nil {
			return next.Document(), nil
		}
		old, oldReport := spec.Load(prev.Document)
		if !oldReport.OK() {
			// The deployed version was valid under the rules of its day; without a loadable
			// predecessor there is nothing to compare against.
			s.log.Warn("deployed spec no longer loads; skipping the compatibility check",
				"instance", inst.Name, "environment", env, "version", prev.Version)
			return next.Document(), nil
		}
		if issues := spec.CheckCompat(old, next, force, prod); len(issues) > 0 {
			msg := "Spec is incompatible with the deployed version " + strconv.Itoa(prev.Version) + "; pass \"force\": true to deploy anyway (not in prod)"
			if prod {
				msg = "Spec is incompatible with the deployed version " + strconv.Itoa(prev.Version) + "; prod does not accept \"force\""
			}
			return nil, &Problem{Err: ErrValidation, Message: msg, Path: "spec", Errors: issueErrors(issues)}
		}
		return next.Document(), nil
	})
	if err != nil {
		return err
	}
	if s.engine != nil {
		s.engine.SpecDeployed(engine.Target{Instance: inst.ID, Environment: env}, version.Version, next)
	}
	s.log.Info("spec deployed", "instance", inst.Name, "environment", env, "version", version.Version, "force", force)
	answer := map[string]any{"ok": true, "version": version.Version, "environment": env}
	if len(report.Warnings) > 0 {
		answer["warnings"] = issueMessages(report.Warnings)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, answer)
	return nil
}

func (s *Server) getSpec(r *Request) error {
	inst, err := s.instance(r)
	if err != nil {
		return err
	}
	args := r.Ctx.QueryArgs()
	var envArg *string
	if args.Has("environment") {
		e := string(args.Peek("environment"))
		envArg = &e
	}
	env, err := environment(envArg, "environment")
	if err != nil {
		return err
	}
	version := 0
	if args.Has("version") {
		version, err = strconv.Atoi(string(args.Peek("version")))
		if err != nil || version < 1 {
			return fieldProblem(ErrBadRequest, "version", "Query parameter \"version\" must be a positive integer")
		}
	}
	sv, err := s.ctl.Spec(inst.ID, env, version)
	if errors.Is(err, control.ErrNotFound) {
		if version > 0 {
			return problem(ErrNotFound, "Spec version %d of %s/%s not found", version, inst.Name, env)
		}
		return problem(ErrNotFound, "No spec deployed to %s/%s", inst.Name, env)
	}
	if err != nil {
		return err
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, map[string]any{
		"ok": true, "spec": json.RawMessage(sv.Document), "version": sv.Version,
		"environment": env, "deployed_at": sv.DeployedAt.Format(time.RFC3339),
	})
	return nil
}
