package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// httpConn is a minimal HTTP/1.1 client on one keep-alive connection, the counterpart of
// respConn: one connection per load-generator connection, each request written with one write,
// the answer read as its status and a body sized by Content-Length (fasthttp, which serves j17,
// sends one with every answer the suite asks for). A general-purpose client spends more of the
// shared processor per request than the server's own work on a trivial one, and the load
// generator runs on the same cores as the system under test.
//
// A request is never sent twice: after an error the connection is closed, and the next request
// dials again.
type httpConn struct {
	addr     string
	nc       net.Conn
	r        *bufio.Reader
	req      []byte
	body     []byte
	deadline time.Time // the socket's deadline, moved only when less than half of ioTimeout is left
}

// ioTimeout bounds a request's write and answer, so that a hung server fails the run instead of
// hanging it.
const ioTimeout = time.Minute

// errNoLength is an answer whose body length is not given by Content-Length.
var errNoLength = errors.New("http: answer without Content-Length")

func newHTTPConn(addr string) *httpConn { return &httpConn{addr: addr} }

// do sends one request and returns the answer's status and body. The body is valid until the
// next call.
func (c *httpConn) do(method, path, token string, body []byte) (int, []byte, error) {
	if c.nc == nil {
		nc, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, nil, err
		}
		c.nc, c.r, c.deadline = nc, bufio.NewReaderSize(nc, 16<<10), time.Time{}
	}
	status, closeAfter, err := c.roundTrip(method, path, token, body)
	if err != nil || closeAfter {
		_ = c.Close()
	}
	return status, c.body, err
}

func (c *httpConn) roundTrip(method, path, token string, body []byte) (status int, closeAfter bool, err error) {
	if now := time.Now(); c.deadline.Sub(now) < ioTimeout/2 {
		c.deadline = now.Add(ioTimeout)
		if err := c.nc.SetDeadline(c.deadline); err != nil {
			return 0, false, err
		}
	}
	b := append(c.req[:0], method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.addr...)
	if token != "" {
		b = append(b, "\r\nAuthorization: Bearer "...)
		b = append(b, token...)
	}
	if body != nil {
		b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.req = b
	if _, err := c.nc.Write(b); err != nil {
		return 0, false, err
	}
	return c.readAnswer()
}

// readAnswer reads the status line, the headers and the body of one answer into c.body.
func (c *httpConn) readAnswer() (status int, closeAfter bool, err error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("http: bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("http: bad status line %q", line)
	}
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("http: bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("http: bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			closeAfter = bytes.EqualFold(value, []byte("close"))
		}
	}
	if status/100 == 1 || status == 204 || status == 304 {
		c.body = c.body[:0]
		return status, closeAfter, nil
	}
	if length < 0 {
		return 0, false, errNoLength
	}
	if cap(c.body) < length {
		c.body = make([]byte, length)
	}
	c.body = c.body[:length]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return 0, false, err
	}
	return status, closeAfter, nil
}

// Close closes the connection; the next request dials a new one.
func (c *httpConn) Close() error {
	if c.nc == nil {
		return nil
	}
	err := c.nc.Close()
	c.nc, c.r = nil, nil
	return err
}
