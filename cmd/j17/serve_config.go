package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/implication"
)

// serveConfig is everything `j17 serve` takes from its flags and environment.
type serveConfig struct {
	data         string
	listen       string
	rateLimitKey int
	rateLimitIP  int
	maxBody      int
	baseDomain   string
	// cacheBytes bounds the aggregate cache (0 turns it off); snapshotEvery is the snapshot
	// interval in events.
	cacheBytes    int
	snapshotEvery int
	// maxDepth and maxTotal bound implication chains (max_depth and max_total of the
	// Implications Reference); schedulerPoll is how often due scheduled events are looked for.
	maxDepth      int
	maxTotal      int
	schedulerPoll time.Duration
	// crashAfterCommit is the crash-test hook of crashAfterCommitEnv; no flag.
	crashAfterCommit bool
	logFormat        string
	logLevel         string
	// cpuProfile, when set, is the file the process's CPU profile goes to until shutdown.
	cpuProfile string
	// adminEmail and adminPassword create the first operator on an empty data directory.
	adminEmail    string
	adminPassword string
	// bcryptCost is the cost of password hashes; 0 means bcrypt's default. It is no flag:
	// in-process tests lower it to keep hashing out of their running time.
	bcryptCost int
}

// The defaults of --cache-bytes and --snapshot-every; the implication limits and the scheduler
// poll default to the engine's.
const (
	defaultCacheBytes    = 256 << 20
	defaultSnapshotEvery = 1000
)

// parseServeConfig reads the serve flags; each flag's default comes from its environment
// variable, and that variable's default from the built-in value, so flags override the
// environment and the environment overrides the defaults.
func parseServeConfig(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	var envErr error
	str := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	num := func(name string, def int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			envErr = fmt.Errorf("%s=%q: want a non-negative integer", name, v)
			return def
		}
		return n
	}
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			envErr = fmt.Errorf("%s=%q: want a duration such as 500ms or 2s", name, v)
			return def
		}
		return d
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.data, "data", str("J17_DATA", "./data"), "data `directory` (env J17_DATA)")
	fs.StringVar(&c.listen, "listen", str("J17_LISTEN", "127.0.0.1:8017"), "listen `address` (env J17_LISTEN)")
	fs.IntVar(&c.rateLimitKey, "rate-limit-key", num("J17_RATE_LIMIT_KEY", 500), "requests per minute per API key, 0 = off (env J17_RATE_LIMIT_KEY)")
	fs.IntVar(&c.rateLimitIP, "rate-limit-ip", num("J17_RATE_LIMIT_IP", 2000), "requests per minute per client IP, 0 = off (env J17_RATE_LIMIT_IP)")
	fs.IntVar(&c.maxBody, "max-body", num("J17_MAX_BODY", 1<<20), "largest request body in `bytes`; larger bodies get 413 (env J17_MAX_BODY)")
	fs.StringVar(&c.baseDomain, "base-domain", str("J17_BASE_DOMAIN", ""), "host routing `domain`: <name>.D is prod, <name>-staging.D staging, <name>-test.D test (env J17_BASE_DOMAIN)")
	fs.IntVar(&c.cacheBytes, "cache-bytes", num("J17_CACHE_BYTES", defaultCacheBytes), "aggregate cache budget in `bytes`, 0 = off (env J17_CACHE_BYTES)")
	fs.IntVar(&c.snapshotEvery, "snapshot-every", num("J17_SNAPSHOT_EVERY", defaultSnapshotEvery), "save an aggregate snapshot every `N` events (env J17_SNAPSHOT_EVERY)")
	fs.IntVar(&c.maxDepth, "implication-max-depth", num("J17_IMPLICATION_MAX_DEPTH", implication.DefaultLimits.MaxDepth), "deepest implication chain, max_depth (env J17_IMPLICATION_MAX_DEPTH)")
	fs.IntVar(&c.maxTotal, "implication-max-total", num("J17_IMPLICATION_MAX_TOTAL", implication.DefaultLimits.MaxTotal), "most implied events per trigger event, max_total (env J17_IMPLICATION_MAX_TOTAL)")
	fs.DurationVar(&c.schedulerPoll, "scheduler-poll", dur("J17_SCHEDULER_POLL", engine.DefaultSchedulerPoll), "how often due scheduled events are looked for, a `duration` (env J17_SCHEDULER_POLL)")
	fs.StringVar(&c.logFormat, "log-format", str("J17_LOG_FORMAT", "text"), "log format, text or json (env J17_LOG_FORMAT)")
	fs.StringVar(&c.logLevel, "log-level", str("J17_LOG_LEVEL", "info"), "log level: debug, info, warn or error (env J17_LOG_LEVEL)")
	fs.StringVar(&c.cpuProfile, "cpu-profile", str("J17_CPU_PROFILE", ""), "write the process's CPU profile (pprof) to `file` until shutdown (env J17_CPU_PROFILE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if envErr != nil {
		return c, envErr
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	switch {
	case c.rateLimitKey < 0 || c.rateLimitIP < 0:
		return c, fmt.Errorf("rate limits must not be negative")
	case c.cacheBytes < 0:
		return c, fmt.Errorf("--cache-bytes must not be negative")
	case c.snapshotEvery < 1:
		return c, fmt.Errorf("--snapshot-every must be at least 1")
	case c.maxBody < 1:
		return c, fmt.Errorf("--max-body must be at least 1")
	case c.maxDepth < 1:
		return c, fmt.Errorf("--implication-max-depth must be at least 1")
	case c.maxTotal < 1:
		return c, fmt.Errorf("--implication-max-total must be at least 1")
	case c.schedulerPoll <= 0:
		return c, fmt.Errorf("--scheduler-poll %s: want a positive duration", c.schedulerPoll)
	case c.logFormat != "text" && c.logFormat != "json":
		return c, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
	}
	if _, err := parseLevel(c.logLevel); err != nil {
		return c, err
	}
	c.adminEmail = getenv("J17_ADMIN_EMAIL")
	c.adminPassword = getenv("J17_ADMIN_PASSWORD")
	c.crashAfterCommit = getenv(crashAfterCommitEnv) == "1"
	return c, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// newLogger builds the server's logger on w.
func newLogger(c serveConfig, w io.Writer) *slog.Logger {
	level, _ := parseLevel(c.logLevel) // validated by parseServeConfig
	opts := &slog.HandlerOptions{Level: level}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
