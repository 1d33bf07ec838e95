package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestServeConfigPrecedence(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want serveConfig
		bad  bool
	}{
		{
			name: "defaults",
			want: serveConfig{data: "./data", listen: "127.0.0.1:8017", rateLimitKey: 500, rateLimitIP: 2000, maxBody: 1048576, logFormat: "text", logLevel: "info",
				cacheBytes: 256 << 20, snapshotEvery: 1000, maxDepth: 5, maxTotal: 100, schedulerPoll: 500 * time.Millisecond},
		},
		{
			name: "environment over defaults",
			env: map[string]string{"J17_DATA": "/env/data", "J17_LISTEN": "0.0.0.0:1", "J17_RATE_LIMIT_KEY": "7", "J17_RATE_LIMIT_IP": "0",
				"J17_MAX_BODY": "99", "J17_BASE_DOMAIN": "env.example", "J17_LOG_FORMAT": "json", "J17_LOG_LEVEL": "debug",
				"J17_ADMIN_EMAIL": "a@b.c", "J17_ADMIN_PASSWORD": "pw", "J17_CACHE_BYTES": "0", "J17_SNAPSHOT_EVERY": "50",
				"J17_IMPLICATION_MAX_DEPTH": "3", "J17_IMPLICATION_MAX_TOTAL": "20", "J17_SCHEDULER_POLL": "2s", "J17_CPU_PROFILE": "env.pprof"},
			want: serveConfig{data: "/env/data", listen: "0.0.0.0:1", rateLimitKey: 7, rateLimitIP: 0, maxBody: 99, baseDomain: "env.example",
				logFormat: "json", logLevel: "debug", adminEmail: "a@b.c", adminPassword: "pw", cacheBytes: 0, snapshotEvery: 50,
				maxDepth: 3, maxTotal: 20, schedulerPoll: 2 * time.Second, cpuProfile: "env.pprof"},
		},
		{
			name: "flags over environment",
			args: []string{"--data", "/flag/data", "--listen", "127.0.0.1:2", "--rate-limit-key", "0", "--rate-limit-ip", "5",
				"--max-body", "10", "--base-domain", "flag.example", "--log-format", "text", "--log-level", "warn",
				"--cache-bytes", "1024", "--snapshot-every", "7",
				"--implication-max-depth", "2", "--implication-max-total", "1", "--scheduler-poll", "50ms", "--cpu-profile", "flag.pprof"},
			env: map[string]string{"J17_DATA": "/env/data", "J17_LISTEN": "0.0.0.0:1", "J17_RATE_LIMIT_KEY": "7", "J17_RATE_LIMIT_IP": "0",
				"J17_MAX_BODY": "99", "J17_BASE_DOMAIN": "env.example", "J17_LOG_FORMAT": "json", "J17_LOG_LEVEL": "debug",
				"J17_IMPLICATION_MAX_DEPTH": "3", "J17_IMPLICATION_MAX_TOTAL": "20", "J17_SCHEDULER_POLL": "2s", "J17_CPU_PROFILE": "env.pprof"},
			want: serveConfig{data: "/flag/data", listen: "127.0.0.1:2", rateLimitKey: 0, rateLimitIP: 5, maxBody: 10, baseDomain: "flag.example",
				logFormat: "text", logLevel: "warn", cacheBytes: 1024, snapshotEvery: 7, maxDepth: 2, maxTotal: 1, schedulerPoll: 50 * time.Millisecond,
				cpuProfile: "flag.pprof"},
		},
		{name: "bad env number", env: map[string]string{"J17_MAX_BODY": "lots"}, bad: true},
		{name: "negative env number", env: map[string]string{"J17_RATE_LIMIT_IP": "-1"}, bad: true},
		{name: "bad env number overridden by a flag is still reported", args: []string{"--max-body", "5"}, env: map[string]string{"J17_MAX_BODY": "x"}, bad: true},
		{name: "negative flag", args: []string{"--rate-limit-key", "-1"}, bad: true},
		{name: "zero body", args: []string{"--max-body", "0"}, bad: true},
		{name: "zero snapshot interval", args: []string{"--snapshot-every", "0"}, bad: true},
		{name: "zero implication depth", args: []string{"--implication-max-depth", "0"}, bad: true},
		{name: "zero implication total", args: []string{"--implication-max-total", "0"}, bad: true},
		{name: "negative implication total", args: []string{"--implication-max-total", "-3"}, bad: true},
		{name: "bad implication depth in env", env: map[string]string{"J17_IMPLICATION_MAX_DEPTH": "deep"}, bad: true},
		{name: "zero scheduler poll", args: []string{"--scheduler-poll", "0s"}, bad: true},
		{name: "negative scheduler poll", args: []string{"--scheduler-poll", "-1s"}, bad: true},
		{name: "scheduler poll without a unit", args: []string{"--scheduler-poll", "500"}, bad: true},
		{name: "bad scheduler poll in env", env: map[string]string{"J17_SCHEDULER_POLL": "soon"}, bad: true},
		{name: "bad log format", args: []string{"--log-format", "xml"}, bad: true},
		{name: "bad log level", args: []string{"--log-level", "loud"}, bad: true},
		{name: "unknown flag", args: []string{"--nope"}, bad: true},
		{name: "stray argument", args: []string{"extra"}, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseServeConfig(c.args, func(k string) string { return c.env[k] }, io.Discard)
			if c.bad {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestGCDefaultUnlessGOGCSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		gogc string
		want int
	}{{"", defaultGCPercent}, {"50", 100}} {
		debug.SetGCPercent(100)
		applyGCDefault(envOf("GOGC", c.gogc))
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", c.gogc, got, c.want)
		}
	}
}

func TestProcsDefaultUnlessGOMAXPROCSSet(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(base)
	for _, c := range []struct {
		env  string
		want int
	}{{"", base + spareProcs}, {"1", base}} {
		runtime.GOMAXPROCS(base)
		applyProcsDefault(envOf("GOMAXPROCS", c.env))
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("GOMAXPROCS=%q: %d processors, want %d", c.env, got, c.want)
		}
	}
}

// envOf is an environment that sets only key, to value.
func envOf(key, value string) func(string) string {
	return func(k string) string {
		if k == key {
			return value
		}
		return ""
	}
}

func TestCPUProfileCoversTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	ran := false
	want := errors.New("the run's own error")
	err := withCPUProfile(path, func() error {
		ran = true
		return want
	})
	if !ran || !errors.Is(err, want) {
		t.Fatalf("ran %v, err %v: want the run's error", ran, err)
	}
	// e2e's TestCPUProfileWrittenAtShutdown reads the profile of the real binary.
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("no profile: %v", err)
	}

	if err := withCPUProfile("", func() error { return nil }); err != nil {
		t.Errorf("without a path: %v", err)
	}
	ran = false
	err = withCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof"), func() error { ran = true; return nil })
	if ran || err == nil || !strings.Contains(err.Error(), "--cpu-profile") {
		t.Errorf("unwritable profile: ran %v, err %v; want an error naming the flag and no run", ran, err)
	}
}
