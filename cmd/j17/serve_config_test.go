package main

import (
	"io"
	"testing"
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
				cacheBytes: 256 << 20, snapshotEvery: 1000},
		},
		{
			name: "environment over defaults",
			env: map[string]string{"J17_DATA": "/env/data", "J17_LISTEN": "0.0.0.0:1", "J17_RATE_LIMIT_KEY": "7", "J17_RATE_LIMIT_IP": "0",
				"J17_MAX_BODY": "99", "J17_BASE_DOMAIN": "env.example", "J17_LOG_FORMAT": "json", "J17_LOG_LEVEL": "debug",
				"J17_ADMIN_EMAIL": "a@b.c", "J17_ADMIN_PASSWORD": "pw", "J17_CACHE_BYTES": "0", "J17_SNAPSHOT_EVERY": "50"},
			want: serveConfig{data: "/env/data", listen: "0.0.0.0:1", rateLimitKey: 7, rateLimitIP: 0, maxBody: 99, baseDomain: "env.example",
				logFormat: "json", logLevel: "debug", adminEmail: "a@b.c", adminPassword: "pw", cacheBytes: 0, snapshotEvery: 50},
		},
		{
			name: "flags over environment",
			args: []string{"--data", "/flag/data", "--listen", "127.0.0.1:2", "--rate-limit-key", "0", "--rate-limit-ip", "5",
				"--max-body", "10", "--base-domain", "flag.example", "--log-format", "text", "--log-level", "warn",
				"--cache-bytes", "1024", "--snapshot-every", "7"},
			env: map[string]string{"J17_DATA": "/env/data", "J17_LISTEN": "0.0.0.0:1", "J17_RATE_LIMIT_KEY": "7", "J17_RATE_LIMIT_IP": "0",
				"J17_MAX_BODY": "99", "J17_BASE_DOMAIN": "env.example", "J17_LOG_FORMAT": "json", "J17_LOG_LEVEL": "debug"},
			want: serveConfig{data: "/flag/data", listen: "127.0.0.1:2", rateLimitKey: 0, rateLimitIP: 5, maxBody: 10, baseDomain: "flag.example",
				logFormat: "text", logLevel: "warn", cacheBytes: 1024, snapshotEvery: 7},
		},
		{name: "bad env number", env: map[string]string{"J17_MAX_BODY": "lots"}, bad: true},
		{name: "negative env number", env: map[string]string{"J17_RATE_LIMIT_IP": "-1"}, bad: true},
		{name: "bad env number overridden by a flag is still reported", args: []string{"--max-body", "5"}, env: map[string]string{"J17_MAX_BODY": "x"}, bad: true},
		{name: "negative flag", args: []string{"--rate-limit-key", "-1"}, bad: true},
		{name: "zero body", args: []string{"--max-body", "0"}, bad: true},
		{name: "zero snapshot interval", args: []string{"--snapshot-every", "0"}, bad: true},
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
