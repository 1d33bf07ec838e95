package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/valyala/fasthttp"
)

// decodeBody decodes the JSON object of the request body into dst, a pointer to a struct.
// Every failure is a 400 naming what is wrong: no body, not JSON, not an object, a field of the
// wrong type.
func decodeBody(ctx *fasthttp.RequestCtx, dst any) error {
	body := bytes.TrimSpace(ctx.PostBody())
	if len(body) == 0 {
		return problem(ErrBadRequest, "Request body is required (a JSON object)")
	}
	if body[0] != '{' {
		if !json.Valid(body) {
			return problem(ErrBadRequest, "Request body is not valid JSON")
		}
		return problem(ErrBadRequest, "Request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(dst)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fieldProblem(ErrBadRequest, typeErr.Field, "Field %q must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case err != nil:
		return problem(ErrBadRequest, "Request body is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return problem(ErrBadRequest, "Request body is not valid JSON (data after the object)")
	}
	return nil
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	case "slice":
		return "an array"
	default:
		return "an object"
	}
}

// require reports a missing required string field; a present empty string counts as missing.
func require(v *string, field string) error {
	if v == nil || *v == "" {
		return fieldProblem(ErrBadRequest, field, "Field %q is required", field)
	}
	return nil
}
