package api

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The server's connections, tracked for two things fasthttp leaves out, and to make the
// deadlines it sets cheap.
//
// Lingering close. fasthttp answers a body over the limit with 413 and closes the connection
// without reading the rest of the body. Closing a TCP socket that still has unread bytes makes
// the kernel send a reset, and a client still sending its body then sees "connection reset"
// instead of the 413. So a connection whose body was refused, like net/http's, first shuts down
// its write side (the answer is already sent) and discards what the client still sends, for a
// bounded time and number of bytes, before it is really closed. Only such connections linger:
// their serving goroutine has finished, so the drain is their only reader.
//
// Deadlines. fasthttp moves a connection's deadlines on every request: the idle deadline before
// it waits for the next request, the read deadline once it starts, the write deadline before the
// answer. Each move rearms a runtime timer, three per request. A tracked connection records the
// deadline it is asked for and arms the socket only when it reads or writes, and only if the armed
// deadline is earlier than the one asked for or more than deadlineSlack later; it then arms
// deadlineSlack later than asked. A busy keep-alive connection thus rearms each timer about once
// per deadlineSlack, and a timeout fires between its time and deadlineSlack later.
//
// Shutdown. fasthttp counts a connection as idle, and closes it at shutdown, only between
// requests; one a client opened and has not used yet (clients keep spare connections) waits for
// its first request until the read timeout. Shutdown therefore also ends the reads of every
// connection that is not running a handler, so that only requests in flight are waited for.
const (
	lingerTimeout  = 500 * time.Millisecond
	lingerMaxBytes = 8 << 20
	deadlineSlack  = time.Second
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
			c.interruptRead()
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
	set           *connSet
	handling      atomic.Int32 // handlers running on the connection
	linger        atomic.Bool  // Close drains before closing
	once          sync.Once
	readDeadline  lazyDeadline
	writeDeadline lazyDeadline
}

// lazyDeadline is one deadline of a connection: the one asked for and the one armed on the
// socket, in Unix nanoseconds, 0 for none.
type lazyDeadline struct {
	wanted atomic.Int64
	armed  atomic.Int64
}

func (d *lazyDeadline) set(t time.Time) {
	if t.IsZero() {
		d.wanted.Store(0)
		return
	}
	d.wanted.Store(t.UnixNano())
}

// due returns the deadline to arm before an operation, and false when the armed one will do:
// the same, or at most deadlineSlack after the one asked for.
func (d *lazyDeadline) due() (time.Time, bool) {
	wanted, armed := d.wanted.Load(), d.armed.Load()
	switch {
	case wanted == 0:
		return time.Time{}, armed != 0
	case armed >= wanted && armed-wanted <= int64(deadlineSlack):
		return time.Time{}, false
	}
	return time.Unix(0, wanted+int64(deadlineSlack)), true
}

func (d *lazyDeadline) arm(t time.Time, apply func(time.Time) error) error {
	if err := apply(t); err != nil {
		return err
	}
	if t.IsZero() {
		d.armed.Store(0)
	} else {
		d.armed.Store(t.UnixNano())
	}
	return nil
}

// interruptRead ends the pending read at once, and the next ones until a new read deadline is
// set.
func (c *serverConn) interruptRead() {
	now := time.Now()
	c.readDeadline.wanted.Store(now.UnixNano())
	_ = c.TCPConn.SetReadDeadline(now)
	c.readDeadline.armed.Store(now.UnixNano())
}

func (c *serverConn) SetDeadline(t time.Time) error {
	c.readDeadline.set(t)
	c.writeDeadline.set(t)
	return nil
}

func (c *serverConn) SetReadDeadline(t time.Time) error {
	c.readDeadline.set(t)
	return nil
}

func (c *serverConn) SetWriteDeadline(t time.Time) error {
	c.writeDeadline.set(t)
	return nil
}

func (c *serverConn) armRead() error {
	if t, ok := c.readDeadline.due(); ok {
		return c.readDeadline.arm(t, c.TCPConn.SetReadDeadline)
	}
	return nil
}

func (c *serverConn) armWrite() error {
	if t, ok := c.writeDeadline.due(); ok {
		return c.writeDeadline.arm(t, c.TCPConn.SetWriteDeadline)
	}
	return nil
}

func (c *serverConn) Read(p []byte) (int, error) {
	if err := c.armRead(); err != nil {
		return 0, err
	}
	return c.TCPConn.Read(p)
}

func (c *serverConn) Write(p []byte) (int, error) {
	if err := c.armWrite(); err != nil {
		return 0, err
	}
	return c.TCPConn.Write(p)
}

// ReadFrom and WriteTo would otherwise reach the socket through the embedded connection without
// arming its deadline.
func (c *serverConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.armWrite(); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(r)
}

func (c *serverConn) WriteTo(w io.Writer) (int64, error) {
	if err := c.armRead(); err != nil {
		return 0, err
	}
	return c.TCPConn.WriteTo(w)
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
