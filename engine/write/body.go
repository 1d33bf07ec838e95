package write

import (
	"bytes"
	"strconv"
	"unicode/utf8"

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

// The tags of each struct above, in field order, for objectMembers.
var (
	singleNames   = [...]string{"data", "metadata"}
	batchNames    = [...]string{"events", "metadata"}
	eventNames    = [...]string{"type", "data"}
	metadataNames = [...]string{"actor", "target", "previous_length", "skip_occ", "timestamp"}
	refNames      = [...]string{"type", "id"}
)

// The decode functions read a valid JSON object into its struct. Its members share memory with
// obj. Each reads the members itself where objectMembers can, and leaves obj to the decoder
// otherwise; they are one per struct, not generic, so that the struct stays on the stack.

func decodeSingle(obj []byte) (singleBody, error) {
	var v [len(singleNames)]json.RawMessage
	if !objectMembers(obj, singleNames[:], v[:]) {
		return decodeSlow[singleBody](obj)
	}
	return singleBody{Data: v[0], Metadata: v[1]}, nil
}

func decodeBatch(obj []byte) (batchBody, error) {
	var v [len(batchNames)]json.RawMessage
	if !objectMembers(obj, batchNames[:], v[:]) {
		return decodeSlow[batchBody](obj)
	}
	return batchBody{Events: v[0], Metadata: v[1]}, nil
}

func decodeEvent(obj []byte) (batchEvent, error) {
	var v [len(eventNames)]json.RawMessage
	if !objectMembers(obj, eventNames[:], v[:]) {
		return decodeSlow[batchEvent](obj)
	}
	return batchEvent{Type: v[0], Data: v[1]}, nil
}

func decodeMetadata(obj []byte) (metadataIn, error) {
	var v [len(metadataNames)]json.RawMessage
	if !objectMembers(obj, metadataNames[:], v[:]) {
		return decodeSlow[metadataIn](obj)
	}
	return metadataIn{Actor: v[0], Target: v[1], PreviousLength: v[2], SkipOCC: v[3], Timestamp: v[4]}, nil
}

func decodeRef(obj []byte) (refIn, error) {
	var v [len(refNames)]json.RawMessage
	if !objectMembers(obj, refNames[:], v[:]) {
		return decodeSlow[refIn](obj)
	}
	return refIn{Type: v[0], ID: v[1]}, nil
}

func decodeSlow[T any](obj []byte) (T, error) {
	var v T
	if err := json.Unmarshal(obj, &v); err != nil {
		return v, problem.New(problem.ErrMalformed, "Request body is not valid JSON")
	}
	return v, nil
}

// absent reports whether a member was left out or sent as null.
func absent(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// bodyObject checks that a request body is a JSON object and returns it without surrounding
// space.
func bodyObject(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, problem.New(problem.ErrMalformed, "Request body is required (a JSON object)")
	}
	// The decoder's Valid, like encoding/json's, lets any bytes through inside strings; JSON text
	// is UTF-8, and the store refuses a string that is not.
	if !json.Valid(raw) || !utf8.Valid(raw) {
		return nil, problem.New(problem.ErrMalformed, "Request body is not valid JSON")
	}
	if !isObject(raw) {
		return nil, problem.New(problem.ErrMalformed, "Request body must be a JSON object")
	}
	return raw, nil
}

// memberObject checks that raw, a member of a body that bodyObject accepted (so valid JSON
// without surrounding space), is an object; what names it in the error.
func memberObject(raw []byte, what string) error {
	if !isObject(raw) {
		return problem.At(problem.ErrMalformed, what, "%s must be an object", what)
	}
	return nil
}

// objectMembers sets out[i] to the raw value of the member of obj (a valid JSON object) named
// names[i], a lower-case tag, matching names as the decoder matches tags (ignoring ASCII case)
// and letting the last of two members with one name win, as the decoder does. It reports false
// when a name holds an escape or a byte outside ASCII: the decoder unescapes and folds those,
// and the caller leaves obj to it.
func objectMembers(obj []byte, names []string, out []json.RawMessage) bool {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		start := i + 1
		for i = start; i < len(obj) && obj[i] != '"'; i++ {
			if obj[i] == '\\' || obj[i] >= 0x80 {
				return false
			}
		}
		name := obj[start:i]
		i = skipSpace(obj, i+1) // past the closing quote
		i = skipSpace(obj, i+1) // past the colon
		end := skipValue(obj, i)
		for k, n := range names {
			if foldEqual(name, n) {
				out[k] = obj[i:end:end]
				break
			}
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		d := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				d++
			case '}', ']':
				if d--; d == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// foldEqual reports whether the ASCII name equals lower, a lower-case tag, ignoring case: the
// decoder's match of a member name to a field.
func foldEqual(name []byte, lower string) bool {
	if len(name) != len(lower) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// str decodes a JSON string member; path and member name it in errors, joined only for an
// error.
func str(raw []byte, path, member string) (string, error) {
	if absent(raw) {
		return "", problem.At(problem.ErrMalformed, path+member, "%s is required", path+member)
	}
	if raw[0] != '"' {
		return "", problem.At(problem.ErrMalformed, path+member, "%s must be a string", path+member)
	}
	if s, ok := plainString(raw); ok {
		return s, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", problem.At(problem.ErrMalformed, path+member, "%s must be a string", path+member)
	}
	return s, nil
}

// plainString returns the contents of a JSON string of printable ASCII without escapes, which
// is the string itself; anything else is left to the decoder.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// nonNegative parses a JSON integer of at least 0 written without fraction or exponent.
func nonNegative(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil && n >= 0
}
