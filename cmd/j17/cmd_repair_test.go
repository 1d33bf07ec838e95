package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/j17-go/j17/wal"
)

// repairTestLog writes three records to DATA/<instance>/<env>/log and returns the log directory
// and the position of the second record.
func repairTestLog(t *testing.T, data, instance, env string) (string, wal.Pos) {
	t.Helper()
	dir := filepath.Join(data, instance, env, "log")
	l, err := wal.Open(dir, wal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var second wal.Pos
	for i, p := range []string{"one", "two", "three"} {
		pos, err := l.Append(1, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			second = pos
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, second
}

func TestCmdRepair(t *testing.T) {
	data := t.TempDir()
	sound, _ := repairTestLog(t, data, "acme", "prod")
	broken, second := repairTestLog(t, data, "acme", "test")
	seg := filepath.Join(broken, "00000001.seg")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[second.Off+12] ^= 0xff
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	if code := cmdRepair([]string{"--data", data}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		sound + ": sound, nothing cut",
		broken + ": cut ",
		fmt.Sprintf("from %s at offset %d", seg, second.Off),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	l, err := wal.Open(broken, wal.Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open after repair: %v", err)
	}
	if end := l.End(); end != second {
		t.Errorf("End() after repair = %v, want %v", end, second)
	}
	var stderr2 bytes.Buffer
	if code := cmdRepair([]string{"--data", data}, &stdout, &stderr2); code != 1 || !strings.Contains(stderr2.String(), "in use") {
		t.Errorf("repair of an open log: exit %d, stderr %q; want exit 1 and \"in use\"", code, stderr2.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	stdout.Reset()
	if code := cmdRepair([]string{"--data", data}, &stdout, &stderr); code != 0 || strings.Contains(stdout.String(), "cut ") {
		t.Errorf("second repair: exit %d, output %q; want nothing cut", code, stdout.String())
	}
}

func TestCmdRepairArgs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no logs", []string{"--data", t.TempDir()}, 0, "no logs under"},
		{"missing data dir", []string{"--data", filepath.Join(t.TempDir(), "nope")}, 1, ""},
		{"stray argument", []string{"extra"}, 2, ""},
		{"unknown flag", []string{"--bogus"}, 2, ""},
		{"help", []string{"-h"}, 0, ""},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := cmdRepair(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.out) {
			t.Errorf("%s: exit %d, stdout %q; want exit %d, stdout containing %q", c.name, code, stdout.String(), c.code, c.out)
		}
	}
}
