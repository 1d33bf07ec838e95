package write

import (
	"bytes"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/j17-go/j17/engine/problem"
)

// singleBody and batchBody are the request bodies, with every member kept raw so that each can
// be checked for its own shape and named in the error.
type singleBody struct {
	Data     json.RawMessage `json:"data"`
	Metadata json.RawMessage `json:"metadata"`
}

type batchBody struct {
	Events   json.RawMessage `json:"events"`
	Metadata json.RawMessage `json:"metadata"`
}

type batchEvent struct {
	Type json.RawMessage `json:"type"`
	Data json.RawMessage `json:"data"`
}

type metadataIn struct {
	Actor          json.RawMessage `json:"actor"`
	Target         json.RawMessage `json:"target"`
	PreviousLength json.RawMessage `json:"previous_length"`
	SkipOCC        json.RawMessage `json:"skip_occ"`
	Timestamp      json.RawMessage `json:"timestamp"`
}

type refIn struct {
	Type json.RawMessage `json:"type"`
	ID   json.RawMessage `json:"id"`
}

// absent reports whether a member was left out or sent as null.
func absent(raw []byte) bool { return len(raw) == 0 || bytes.Equal(raw, []byte("null")) }

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// decodeObject decodes raw, which must be a JSON object, into dst; what names it in errors.
func decodeObject(raw []byte, dst any, what string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return problem.New(problem.ErrMalformed, "Request body is required (a JSON object)")
	}
	if !json.Valid(raw) {
		return problem.New(problem.ErrMalformed, "Request body is not valid JSON")
	}
	if !isObject(raw) {
		if what == "" {
			return problem.New(problem.ErrMalformed, "Request body must be a JSON object")
		}
		return problem.At(problem.ErrMalformed, what, "%s must be an object", what)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return problem.New(problem.ErrMalformed, "Request body is not valid JSON")
	}
	return nil
}

// str decodes a JSON string member.
func str(raw []byte, path string) (string, error) {
	if absent(raw) {
		return "", problem.At(problem.ErrMalformed, path, "%s is required", path)
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", problem.At(problem.ErrMalformed, path, "%s must be a string", path)
	}
	return s, nil
}

// nonNegative parses a JSON integer of at least 0 written without fraction or exponent.
func nonNegative(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil && n >= 0
}

// depth returns the deepest nesting of arrays and objects in a valid JSON value.
func depth(raw []byte) int {
	d, most, inStr := 0, 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}
