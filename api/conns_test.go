package api

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyOverLimitReachesTheClient sends bodies much larger than the limit with the standard
// HTTP client, which writes the whole body before it reads the answer, and checks that the
// client gets the 413 rather than a broken pipe or a connection reset, every time.
func TestBodyOverLimitReachesTheClient(t *testing.T) {
	ts := startServer(t, Options{MaxBody: 1000}, registerEcho)
	body := bytes.Repeat([]byte("a"), 4<<20)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < 20; i++ {
		res, err := client.Post(ts.base+"/api/login", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("round %d: got status %d, want 413", i, res.StatusCode)
		}
	}
}

// TestShutdownDoesNotWaitForIdleClients keeps a keep-alive connection open from a client that
// never closes it: Shutdown must still end within the lingering time, not the idle timeout.
func TestShutdownDoesNotWaitForIdleClients(t *testing.T) {
	ts := startServer(t, Options{}, registerEcho)
	addr := strings.TrimPrefix(ts.base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an idle client: %v after %v", err, time.Since(start))
	}
}

// TestShutdownDoesNotWaitForUnusedConnections: a client may open a connection and not send a
// request yet (HTTP clients keep spare ones); Shutdown must not wait for its read timeout.
func TestShutdownDoesNotWaitForUnusedConnections(t *testing.T) {
	ts := startServer(t, Options{}, registerEcho)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // let the server take the connection

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an unused connection open: %v after %v", err, time.Since(start))
	}
}
