package bench

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// rawServer answers every request on 127.0.0.1 with answer(n), n counting requests from 1 across
// connections, and counts the connections it accepted.
func rawServer(t *testing.T, answer func(n int) string) (addr string, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	conns = new(atomic.Int32)
	var served atomic.Int32
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer nc.Close()
				r := bufio.NewReader(nc)
				for {
					length := 0
					for {
						line, err := r.ReadString('\n')
						if err != nil {
							return
						}
						if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
							if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
								return
							}
						}
						if line == "\r\n" {
							break
						}
					}
					if _, err := r.Discard(length); err != nil {
						return
					}
					a := answer(int(served.Add(1)))
					if a == "" {
						return
					}
					if _, err := nc.Write([]byte(a)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), conns
}

func TestHTTPConn(t *testing.T) {
	for _, c := range []struct {
		name       string
		answers    []string // by request number; "" drops the connection without an answer
		wantStatus []int    // 0: an error
		wantBody   []string
		wantConns  int32
	}{{
		name:       "keep-alive reuses one connection",
		answers:    []string{"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 409 Conflict\r\ncontent-length: 3\r\n\r\nbad", "HTTP/1.1 204 No Content\r\n\r\n"},
		wantStatus: []int{201, 409, 204},
		wantBody:   []string{"ok", "bad", ""},
		wantConns:  1,
	}, {
		name:       "Connection: close makes the next request dial",
		answers:    []string{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"},
		wantStatus: []int{200, 200},
		wantBody:   []string{"a", "b"},
		wantConns:  2,
	}, {
		name:       "a dropped connection is an error, and the next request dials",
		answers:    []string{"", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"},
		wantStatus: []int{0, 200},
		wantBody:   []string{"", "b"},
		wantConns:  2,
	}, {
		name:       "an answer without Content-Length is an error",
		answers:    []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"},
		wantStatus: []int{0, 200},
		wantBody:   []string{"", "b"},
		wantConns:  2,
	}, {
		name:       "a bad status line is an error",
		answers:    []string{"SSH-2.0-OpenSSH\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"},
		wantStatus: []int{0, 200},
		wantBody:   []string{"", "b"},
		wantConns:  2,
	}} {
		t.Run(c.name, func(t *testing.T) {
			addr, conns := rawServer(t, func(n int) string { return c.answers[n-1] })
			hc := newHTTPConn(addr)
			defer hc.Close()
			for i := range c.answers {
				body := []byte(nil)
				if i == 0 {
					body = []byte(`{}`)
				}
				status, got, err := hc.do("POST", "/item/1", "j17_0_test_k", body)
				if c.wantStatus[i] == 0 {
					if err == nil {
						t.Fatalf("request %d: status %d, want an error", i+1, status)
					}
					continue
				}
				if err != nil || status != c.wantStatus[i] || string(got) != c.wantBody[i] {
					t.Fatalf("request %d: %d %q %v, want %d %q", i+1, status, got, err, c.wantStatus[i], c.wantBody[i])
				}
			}
			if n := conns.Load(); n != c.wantConns {
				t.Errorf("%d connections, want %d", n, c.wantConns)
			}
		})
	}
}

func TestHTTPConnRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	if _, _, err := newHTTPConn(addr).do("GET", "/healthz", "", nil); err == nil || errors.Is(err, errNoLength) {
		t.Fatalf("got %v, want a dial error", err)
	}
}
