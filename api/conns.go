package api

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The server's connections, tracked for two things fasthttp leaves out.
//
// Lingering close. fasthttp answers a body over the limit with 413 and closes the connection
// without reading the rest of the body. Closing a TCP socket that still has unread bytes makes
// the kernel send a reset, and a client still sending its body then sees "connection reset"
// instead of the 413. So a connection whose body was refused, like net/http's, first shuts down
// its write side (the answer is already sent) and discards what the client still sends, for a
// bounded time and number of bytes, before it is really closed. Only such connections linger:
// their serving goroutine has finished, so the drain is their only reader.
//
// Shutdown. fasthttp counts a connection as idle, and closes it at shutdown, only between
// requests; one a client opened and has not used yet (clients keep spare connections) waits for
// its first request until the read timeout. Shutdown therefore also ends the reads of every
// connection that is not running a handler, so that only requests in flight are waited for.
const (
	lingerTimeout  = 500 * time.Millisecond
	lingerMaxBytes = 8 << 20
)

// connSet is the set of open connections.
type connSet struct {
	mu    sync.Mutex
	conns map[*serverConn]struct{} // protected by mu
}

// interruptReads makes the pending and next reads of every connection not running a handler
// fail at once.
func (cs *connSet) interruptReads() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for c := range cs.conns {
		if c.handling.Load() == 0 {
			_ = c.TCPConn.SetReadDeadline(time.Now())
		}
	}
}

// trackingListener hands out tracked connections.
type trackingListener struct {
	net.Listener
	set *connSet
}

func (l trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	sc := &serverConn{TCPConn: tc, set: l.set}
	l.set.mu.Lock()
	if l.set.conns == nil {
		l.set.conns = map[*serverConn]struct{}{}
	}
	l.set.conns[sc] = struct{}{}
	l.set.mu.Unlock()
	return sc, nil
}

// serverConn is a tracked TCP connection.
type serverConn struct {
	*net.TCPConn
	set      *connSet
	handling atomic.Int32 // handlers running on the connection
	linger   atomic.Bool  // Close drains before closing
	once     sync.Once
}

// connOf returns the tracked connection of ctx, or nil.
func connOf(ctx *fasthttp.RequestCtx) *serverConn {
	c, _ := ctx.Conn().(*serverConn)
	return c
}

func (c *serverConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.conns, c)
	c.set.mu.Unlock()
	if !c.linger.Load() {
		return c.TCPConn.Close()
	}
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

func (c *serverConn) drain() {
	_, _ = io.Copy(io.Discard, io.LimitReader(c.TCPConn, lingerMaxBytes))
	_ = c.TCPConn.Close()
}
