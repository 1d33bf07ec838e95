package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestMain lets a test start this test binary as the j17 command itself (see startProcess).
func TestMain(m *testing.M) {
	if os.Getenv("J17_TEST_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func TestUsage(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
		out    string // where the usage goes: "stdout" or "stderr"
	}{
		{"no command", nil, 2, "stderr"},
		{"unknown command", []string{"frobnicate"}, 2, "stderr"},
		{"help", []string{"help"}, 0, "stdout"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		status := run(c.args, &stdout, &stderr)
		if status != c.status {
			t.Errorf("%s: got status %d, want %d", c.name, status, c.status)
		}
		text := stderr.String()
		if c.out == "stdout" {
			text = stdout.String()
		}
		for _, cmd := range commands {
			if !strings.Contains(text, "  "+cmd.name+" ") {
				t.Errorf("%s: usage does not list %q:\n%s", c.name, cmd.name, text)
			}
		}
	}
}
