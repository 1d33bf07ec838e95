package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyTooLarge sends a write whose Content-Length is over the default limit of 1,048,576
// bytes (CONTRACT.md § Build and start, --max-body) and expects 413 with the error envelope
// (Writing Events § Error handling: 413). It sends the headers alone over a raw connection: a
// client that keeps writing a body the server has refused may see its connection reset before it
// reads the answer, which would make the check depend on timing.
func TestBodyTooLarge(t *testing.T) {
	f := sharedFixture(t)
	addr := strings.TrimPrefix(f.srv.url(), "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	path := "/order/" + newUUID(4) + "/was_placed"
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, addr, f.keys["prod"]["write"], 1_100_000)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s with Content-Length 1100000: no answer: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != 413 || body["ok"] != false || body["error"] == nil || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("POST %s with Content-Length 1100000: got %d %s (X-Request-Id %q), want 413 with the error envelope and X-Request-Id",
			path, resp.StatusCode, raw, resp.Header.Get("X-Request-Id"))
	}
	conn.Close()
	r := do(f.srv.url(), dataCall(f.keys["prod"]["read"], "GET", strings.TrimSuffix(path, "/was_placed"), nil))
	if r.Status != 404 {
		t.Errorf("aggregate after a refused body: got %s, want 404", r)
	}
}
