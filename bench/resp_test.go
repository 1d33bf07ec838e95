package bench

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
)

func TestRESPReplies(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        int64
		err         error
	}{
		{"simple string", "+OK\r\n", 0, nil},
		{"integer", ":42\r\n", 42, nil},
		{"bulk", "$5\r\nhello\r\n", 5, nil},
		{"nil bulk", "$-1\r\n", -1, nil},
		{"error", "-CONFLICT stream moved\r\n", 0, errRedis},
		{"nested array", "*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$4\r\ntype\r\n$1\r\nx\r\n$2\r\nhi\r\n", 2, nil},
		{"array holding an error", "*2\r\n+QUEUED\r\n-ERR boom\r\n", 2, errRedis},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			c := &respConn{nc: client, r: bufio.NewReader(client), w: bufio.NewWriter(client)}
			sent := make(chan []byte, 1)
			go func() {
				buf := make([]byte, 64)
				n, _ := io.ReadAtLeast(server, buf, len("*1\r\n$4\r\nPING\r\n"))
				sent <- buf[:n]
				_, _ = server.Write([]byte(tc.reply + ":7\r\n"))
				server.Close()
			}()
			got, err := c.do([]byte("PING"))
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("got %d, %v; want %d, %v", got, err, tc.want, tc.err)
			}
			if s := string(<-sent); s != "*1\r\n$4\r\nPING\r\n" {
				t.Errorf("sent %q, want the command as an array of bulk strings", s)
			}
			// The whole reply was consumed: the next one is read intact.
			if next, err := c.reply(); next != 7 || err != nil {
				t.Errorf("next reply: got %d, %v; want 7", next, err)
			}
		})
	}
}

func TestParseBenchmarkCSV(t *testing.T) {
	out := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"XADD item:__rand_int__ * type was_created data x","50377.83","0.261","0.048","0.263","0.431","0.599","1.903"
`
	s, err := parseBenchmarkCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	if s[MetricEventsPerSec] != 50377.83 || s[MetricP50] != 0.263 || s[MetricP99] != 0.599 {
		t.Errorf("got %v, want rps 50377.83, p50 0.263, p99 0.599", s)
	}
	if _, err := parseBenchmarkCSV("garbage"); err == nil {
		t.Error("garbage: got no error, want one")
	}
}
