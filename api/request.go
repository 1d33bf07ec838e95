package api

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"

	"github.com/valyala/fasthttp"
)

// Request is one routed request as a handler sees it.
type Request struct {
	Ctx       *fasthttp.RequestCtx
	RequestID string
	// Principal is who the request acts for: set on data-plane routes, and on control-plane
	// routes to the operator with no instance.
	Principal Principal
	params    []param
	// paramBuf backs params, so that binding the parameters of a data-plane route (three at
	// most) allocates nothing.
	paramBuf [4]param
	// allow lists the methods of the matched path, for a 405.
	allow string
}

// Param returns the value of the route parameter name ("" when the route has none).
func (r *Request) Param(name string) string {
	for _, p := range r.params {
		if p.key == name {
			return p.value
		}
	}
	return ""
}

// Principal is the authenticated party of a request.
type Principal struct {
	InstanceID   string
	InstanceName string
	Environment  string
	// Scope is "read" or "write" for an API key; an operator has "write".
	Scope string
	// KeyID is the API key's id; empty for an operator.
	KeyID string
	// OperatorID is the operator's id; empty for an API key.
	OperatorID string
	// Node is set when the request came through the node-to-node API with the node secret.
	Node bool
}

// IsOperator reports whether the principal is an operator (JWT) rather than an API key.
func (p Principal) IsOperator() bool { return p.OperatorID != "" }

// newID returns 128 random bits in hexadecimal, for request and error ids. The ids need to be
// unique, not secret (they are echoed to clients, and looking an error up takes an operator
// token), so they come from the runtime's generator (ChaCha8, seeded by the system), which costs
// a tenth of crypto/rand (about 10 ns against 90 ns) on every request.
func newID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// requestID reuses a client's X-Request-Id when it is short and plain, so that a client can
// follow its own ids through the logs, and otherwise makes one.
func requestID(ctx *fasthttp.RequestCtx) string {
	id := ctx.Request.Header.Peek("X-Request-Id")
	if len(id) == 0 || len(id) > 64 {
		return newID()
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return newID()
		}
	}
	return string(id)
}
