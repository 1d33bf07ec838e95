package bench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// respConn is a minimal RESP2 client: it sends commands as arrays of bulk strings and reads
// replies, discarding their contents except integers and errors.
type respConn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// errRedis is an error reply of the server.
var errRedis = errors.New("redis error reply")

func dialRESP(addr string) (*respConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}, nil
}

// send buffers one command; flush sends the buffered ones.
func (c *respConn) send(args ...[]byte) {
	c.w.WriteByte('*')
	c.w.WriteString(strconv.Itoa(len(args)))
	c.w.WriteString("\r\n")
	for _, a := range args {
		c.w.WriteByte('$')
		c.w.WriteString(strconv.Itoa(len(a)))
		c.w.WriteString("\r\n")
		c.w.Write(a)
		c.w.WriteString("\r\n")
	}
}

// do sends one command and reads its reply; it returns the reply's integer, or the array
// length, or -1 for a nil reply.
func (c *respConn) do(args ...[]byte) (int64, error) {
	c.send(args...)
	if err := c.w.Flush(); err != nil {
		return 0, err
	}
	return c.reply()
}

// reply reads one reply, nested arrays included.
func (c *respConn) reply() (int64, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 {
		return 0, fmt.Errorf("redis: short reply %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return 0, nil
	case '-':
		return 0, fmt.Errorf("%w: %s", errRedis, body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return -1, err
		}
		_, err = c.r.Discard(n + 2)
		return int64(n), err
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return -1, err
		}
		var firstErr error
		for range n {
			if _, err := c.reply(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return int64(n), firstErr
	}
	return 0, fmt.Errorf("redis: unknown reply %q", line)
}

func (c *respConn) Close() error { return c.nc.Close() }
