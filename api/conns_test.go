package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

func TestLazyDeadlineDue(t *testing.T) {
	const w = int64(1_000_000_000_000)
	slack := int64(deadlineSlack)
	for _, c := range []struct {
		name          string
		wanted, armed int64
		want          int64 // the deadline to arm, -1 for none
	}{
		{"none wanted, none armed", 0, 0, -1},
		{"none wanted, one armed", 0, w, 0},
		{"first deadline", w, 0, w + slack},
		{"armed as wanted", w, w, -1},
		{"armed within the slack", w, w + slack, -1},
		{"armed earlier", w, w - 1, w + slack},
		{"armed beyond the slack", w, w + slack + 1, w + slack},
	} {
		var d lazyDeadline
		d.wanted.Store(c.wanted)
		d.armed.Store(c.armed)
		at, due := d.due()
		got := int64(-1)
		switch {
		case due && at.IsZero():
			got = 0
		case due:
			got = at.UnixNano()
		}
		if got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

// trackedPair returns a tracked server connection with a read deadline an hour away already
// armed, and its client end.
func trackedPair(t *testing.T) (*serverConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	nc, err := trackingListener{Listener: ln, set: &connSet{}}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := nc.(*serverConn)
	t.Cleanup(func() { c.Close() })
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	return c, client
}

// readTimesOut checks that a read on c ends with a timeout between least and most after start.
func readTimesOut(t *testing.T, c net.Conn, start time.Time, least, most time.Duration) {
	t.Helper()
	// A read that would wait too long is ended by closing the connection, so the test fails
	// instead of hanging.
	stop := time.AfterFunc(most+time.Second, func() { c.Close() })
	defer stop.Stop()
	_, err := c.Read(make([]byte, 1))
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("got %v, want a timeout", err)
	}
	if took := time.Since(start); took < least || took > most {
		t.Errorf("read ended after %v, want between %v and %v", took, least, most)
	}
}

// TestReadDeadlineMovedEarlierFires checks that a deadline moved earlier after a read armed a
// later one still ends the next read, at most deadlineSlack late (plus a second of grace for a
// busy machine).
func TestReadDeadlineMovedEarlierFires(t *testing.T) {
	c, _ := trackedPair(t)
	const timeout = 50 * time.Millisecond
	start := time.Now()
	if err := c.SetReadDeadline(start.Add(timeout)); err != nil {
		t.Fatal(err)
	}
	readTimesOut(t, c, start, timeout, timeout+deadlineSlack+time.Second)
}

// TestInterruptedReadFailsAtOnce: after interruptRead, the next read fails without waiting for
// the deadline armed earlier or the slack.
func TestInterruptedReadFailsAtOnce(t *testing.T) {
	c, _ := trackedPair(t)
	start := time.Now()
	c.interruptRead()
	readTimesOut(t, c, start, 0, deadlineSlack/2)
}
