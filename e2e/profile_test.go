package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfileWrittenAtShutdown starts the binary with --cpu-profile, serves requests, stops it
// with SIGTERM and expects a CPU profile in the file: the flag reaches the shipped binary, and a
// graceful shutdown ends the profile instead of cutting it off.
func TestCPUProfileWrittenAtShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	s := newServer(t, serverOptions{})
	s.extra = append(s.extra, "--cpu-profile", path)
	s.restart(t)
	for range 100 {
		send(t, s.url(), call{Method: "GET", Path: "/healthz"}, 200, "health check while profiling")
	}
	s.stop()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no profile after shutdown: %v\n%s", err, s.logs())
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not the gzipped protobuf pprof writes: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the profile is cut off: %v", err)
	}
	if !bytes.Contains(b, []byte("nanoseconds")) {
		t.Errorf("the profile does not count CPU time (%d bytes)", len(b))
	}
}
