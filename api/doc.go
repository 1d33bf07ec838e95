// Package api is the HTTP face of a j17 server, on fasthttp: the route tables of the control
// plane (/api/..., /healthz), of the node-to-node API (/_internal/..., X-Node-Secret) and of the
// data plane (everything else); operator login and JWTs, API-key authentication, per-key and
// per-IP rate limits, CORS, request ids, the error envelope, panic recovery, and the
// control-plane routes themselves.
//
// Rate limits count requests per client IP as the TCP peer address: behind a reverse proxy every
// client shares the proxy's bucket (X-Forwarded-For is not trusted).
//
// Every response, success or failure, passes through this package's writers: a failure is turned
// into the envelope {"ok": false, "error", "code", ...} by one function (fail), which maps errors
// to status codes through one table (statusTable); 5xx answers carry X-Error-Id and are kept in the
// control store so that GET /api/instances/:id/ops/:env/errors/:error_id can retrieve them.
//
// The route tables are open for registration. HandleData adds a data-plane route whose handler
// receives the authenticated Principal (instance, environment, scope) after authentication, the
// environment check of --base-domain host routing, rate limiting and the scope check have
// passed. HandleOps adds an operation of one (instance, environment) under both
// /api/instances/:id/ops/:env/... (operator token) and /_internal/:instance/:env/... (node
// secret).
//
// Invariants:
//   - A data-plane handler only ever runs for a principal of exactly one (instance, environment);
//     a key never reaches another pair's routes, and a read key never reaches a write method.
//   - A panic inside a request is recovered, logged with its error id and answered 500; the
//     server keeps serving.
//   - The rate-limit tables hold at most Options.MaxRateLimitEntries buckets each.
//   - Secrets (passwords, keys, tokens) are never logged.
//
// Concurrency: a Server serves requests concurrently; routes must be registered before Serve.
// The rate limiter guards its tables with a mutex; everything else is per request or read-only.
package api
