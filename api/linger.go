package api

import (
	"io"
	"net"
	"sync"
	"time"
)

// Lingering close. fasthttp answers a body over the limit with 413 and closes the connection
// without reading the rest of the body. Closing a TCP socket that still has unread bytes makes
// the kernel send a reset, and a client still sending its body then sees "connection reset"
// instead of the 413. So, like net/http, a closed connection first shuts down its write side
// (the answer is already sent) and discards what the client still sends, for a bounded time and
// number of bytes, before it is really closed.
const (
	lingerTimeout  = 500 * time.Millisecond
	lingerMaxBytes = 8 << 20
)

// lingerListener hands out connections whose Close lingers.
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, nil
}

// lingerConn is a TCP connection whose Close returns at once and drains in the background, so
// that no server worker waits on a slow client. The read deadline set at Close also ends any read
// still blocked in the goroutine that served the connection.
type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

func (c *lingerConn) Close() error {
	c.once.Do(func() {
		if err := c.TCPConn.CloseWrite(); err != nil {
			_ = c.TCPConn.Close()
			return
		}
		_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerTimeout))
		go c.drain()
	})
	return nil
}

func (c *lingerConn) drain() {
	_, _ = io.Copy(io.Discard, io.LimitReader(c.TCPConn, lingerMaxBytes))
	_ = c.TCPConn.Close()
}
