package api

import "github.com/valyala/fasthttp"

// CORS headers of the API Overview page. Browsers also need to read the headers j17 sets, and to
// send the j17 request headers the guides use, so those are exposed and allowed as well.
const (
	corsAllowMethods  = "GET, POST, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, X-Idempotency-Key, X-J17-Instance, X-J17-Environment, X-Request-Id"
	corsExposeHeaders = "X-Request-Id, X-Error-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Scope, Retry-After, X-Idempotency-Replayed"
	corsMaxAge        = "600"
)

// The headers of every response, as byte slices in canonical form: set with SetCanonical, they
// skip the normalising copy that Set makes of each name on every request.
var (
	headerRequestID        = []byte("X-Request-Id")
	headerAllowOrigin      = []byte("Access-Control-Allow-Origin")
	headerAllowMethods     = []byte("Access-Control-Allow-Methods")
	headerAllowHeaders     = []byte("Access-Control-Allow-Headers")
	headerExposeHeaders    = []byte("Access-Control-Expose-Headers")
	corsAllowOriginValue   = []byte("*")
	corsAllowMethodsValue  = []byte(corsAllowMethods)
	corsAllowHeadersValue  = []byte(corsAllowHeaders)
	corsExposeHeadersValue = []byte(corsExposeHeaders)
)

// setCommonHeaders sets the headers of every response: the request id and CORS.
func setCommonHeaders(ctx *fasthttp.RequestCtx, requestID string) {
	h := &ctx.Response.Header
	h.SetCanonical(headerRequestID, []byte(requestID))
	h.SetCanonical(headerAllowOrigin, corsAllowOriginValue)
	h.SetCanonical(headerAllowMethods, corsAllowMethodsValue)
	h.SetCanonical(headerAllowHeaders, corsAllowHeadersValue)
	h.SetCanonical(headerExposeHeaders, corsExposeHeadersValue)
}

// preflight answers a CORS preflight (OPTIONS) request; it needs no credentials.
func preflight(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Access-Control-Max-Age", corsMaxAge)
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
