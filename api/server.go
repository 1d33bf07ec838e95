package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/valyala/fasthttp"
)

// Options configures a Server.
type Options struct {
	// Control is the control-plane store; required.
	Control *control.Store
	// JWTSecret signs operator tokens (HS256); required, at least 32 bytes.
	JWTSecret []byte
	// NodeSecret authenticates the node-to-node API (/_internal/..., header X-Node-Secret); when
	// empty that API refuses every request.
	NodeSecret []byte
	// DataDir is the data directory; each instance gets DataDir/<instance-uuid>/<env>/.
	DataDir string
	// Clock defaults to control.SystemClock.
	Clock control.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// RateLimitKey and RateLimitIP are requests per minute per API key and per client IP on the
	// data plane; 0 turns the limit off.
	RateLimitKey int
	RateLimitIP  int
	// MaxRateLimitEntries bounds each rate-limit table; 0 means 100000.
	MaxRateLimitEntries int
	// MaxBody is the largest request body in bytes; larger bodies get 413. 0 means 1 MiB.
	MaxBody int
	// Engine serves the data plane's event routes and checkpoint operations; without it the
	// server registers none of them.
	Engine *engine.Engine
	// BaseDomain turns on host routing: <name>.<BaseDomain> is prod, <name>-staging.<BaseDomain>
	// staging and <name>-test.<BaseDomain> test.
	BaseDomain string
}

// Server is the HTTP server of j17.
type Server struct {
	conns          connSet
	ctl            *control.Store
	engine         *engine.Engine
	clock          control.Clock
	log            *slog.Logger
	tokens         *tokenIssuer
	dataDir        string
	baseDomain     string
	keyLimit       *limiter
	ipLimit        *limiter
	nodeSecret     []byte
	controlRoutes  router
	dataRoutes     router
	internalRoutes router
	http           *fasthttp.Server
}

// tokenTTL is the lifetime of an operator token (the Authentication page: 24 hours).
const tokenTTL = 24 * time.Hour

// New builds a Server with the control-plane routes registered.
func New(opts Options) (*Server, error) {
	if opts.Control == nil {
		return nil, errors.New("api: Options.Control is required")
	}
	if len(opts.JWTSecret) < 32 {
		return nil, errors.New("api: Options.JWTSecret must hold at least 32 bytes")
	}
	if opts.Clock == nil {
		opts.Clock = control.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxRateLimitEntries <= 0 {
		opts.MaxRateLimitEntries = 100_000
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	s := &Server{
		ctl:        opts.Control,
		engine:     opts.Engine,
		clock:      opts.Clock,
		log:        opts.Logger,
		tokens:     &tokenIssuer{secret: opts.JWTSecret, clock: opts.Clock, ttl: tokenTTL},
		dataDir:    opts.DataDir,
		nodeSecret: opts.NodeSecret,
		baseDomain: strings.ToLower(strings.Trim(opts.BaseDomain, ".")),
		keyLimit:   newLimiter(opts.RateLimitKey, opts.MaxRateLimitEntries, opts.Clock),
		ipLimit:    newLimiter(opts.RateLimitIP, opts.MaxRateLimitEntries, opts.Clock),
	}
	s.http = &fasthttp.Server{
		Handler:               s.serve,
		ErrorHandler:          s.transportError,
		Name:                  "j17",
		MaxRequestBodySize:    opts.MaxBody,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           2 * time.Minute,
		CloseOnShutdown:       true,
		NoDefaultServerHeader: true,
		Logger:                fasthttpLogger{opts.Logger},
	}
	s.routes()
	if s.engine != nil {
		s.registerDataRoutes()
	}
	return s, nil
}

// HandleData registers a data-plane route. Its handler runs only for an authenticated principal
// that passed the rate limits and, for POST, PUT, PATCH and DELETE, holds the write scope.
// Patterns take ":name" for one segment and a final "*name" for the rest of the path. Register
// every route before Serve.
func (s *Server) HandleData(method, pattern string, h Handler) {
	s.dataRoutes.add(method, pattern, h)
}

// Serve accepts connections on ln until Shutdown. A connection whose body was refused closes with
// a lingering close (see conns.go), so that its client still reads the answer.
func (s *Server) Serve(ln net.Listener) error {
	return s.http.Serve(trackingListener{Listener: ln, set: &s.conns})
}

// Shutdown stops accepting connections and waits, until ctx ends, for the requests in flight to
// finish. Connections waiting for a request are ended at once, including ones a client opened
// and never used.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.http.ShutdownWithContext(ctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.conns.interruptReads()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}

// isControlPath tells the control plane's paths from the data plane's.
func isControlPath(path string) bool {
	return path == "/healthz" || path == "/api" || strings.HasPrefix(path, "/api/")
}

// serve is the root handler: headers common to all answers, panic recovery, preflight, then the
// control plane, the node-to-node API or the data plane.
func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	if c := connOf(ctx); c != nil {
		c.handling.Add(1)
		defer c.handling.Add(-1)
	}
	r := &Request{Ctx: ctx, RequestID: requestID(ctx)}
	setCommonHeaders(ctx, r.RequestID)
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		defer s.logRequest(r, s.clock.Now())
	}
	defer s.recoverPanic(r)
	if ctx.IsOptions() {
		preflight(ctx)
		return
	}
	path := string(ctx.Path())
	var err error
	switch {
	case isControlPath(path):
		err = s.serveControl(r, path)
	case isInternalPath(path):
		err = s.serveInternal(r, path)
	default:
		err = s.serveData(r, path)
	}
	if err != nil {
		s.fail(r, err)
	}
}

// logRequest writes the access-log line of a request, at debug level: method, path, status and
// duration, never headers or bodies (they hold keys, tokens and payloads).
func (s *Server) logRequest(r *Request, start time.Time) {
	s.log.Debug("request", slog.String("request_id", r.RequestID), slog.String("method", string(r.Ctx.Method())),
		slog.String("path", string(r.Ctx.Path())), slog.Int("status", r.Ctx.Response.StatusCode()),
		slog.Duration("duration", s.clock.Now().Sub(start)), slog.String("instance_id", r.Principal.InstanceID),
		slog.String("environment", r.Principal.Environment))
}

// route finds the handler of r in rt, binding its parameters.
func route(rt *router, r *Request, path string) (Handler, error) {
	h, params, other := rt.match(string(r.Ctx.Method()), path, r.paramBuf[:0])
	switch {
	case h != nil:
		r.params = params
		return h, nil
	case other != nil:
		r.allow = allowed(other)
		return nil, problem(ErrMethodNotAllowed, "Method %s is not allowed on %s", r.Ctx.Method(), path)
	}
	return nil, problem(ErrNotFound, "No route for %s %s", r.Ctx.Method(), path)
}

// transportError answers requests that fasthttp could not read, such as a body over the limit.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	r := &Request{Ctx: ctx, RequestID: requestID(ctx)}
	setCommonHeaders(ctx, r.RequestID)
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		if c := connOf(ctx); c != nil {
			c.linger.Store(true)
		}
		s.fail(r, problem(ErrBodyTooLarge, "Request body is larger than %d bytes", s.http.MaxRequestBodySize))
		return
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		s.fail(r, problem(ErrBadRequest, "Request was not received in time"))
		return
	}
	s.fail(r, problem(ErrBadRequest, "Malformed HTTP request"))
}

// fasthttpLogger sends fasthttp's own messages to slog at debug level: they are about clients
// that misbehave at the connection level, which a client can repeat at will.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), slog.String("component", "http"))
}
