package apitest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Network is an in-memory network for tests: a Server started with Options.Network listens
// on it, and a client dials it through apiclient.Config.Dial (Server.Config sets it). Nothing
// touches the kernel, so inside a testing/synctest bubble the fake clock drives every wait
// on it (deadlines, pings, timeouts), and its faults make the outages that a test would
// otherwise need a proxy for:
//
//   - Partition: nothing passes in either direction, as when the network between client and
//     server fails. Bytes written meanwhile are held and delivered when it heals (TCP
//     retransmits them); a connection dialed during the partition never completes, even
//     after it heals (its SYN was lost): only the dialer's own deadline ends it.
//   - Disconnect: the server's host is gone, as when the API server process dies: open
//     connections are reset and new ones refused until it is restored.
//
// Create a Network inside the bubble that uses it. All methods are safe for concurrent use.
type Network struct {
	mu   sync.Mutex
	cond *sync.Cond // every wait on the network (one condition, re-checked by each waiter)

	listeners map[string]*memListener
	nextPort  int
	// partitioned / disconnected: the faults in force.
	partitioned, disconnected bool
	conns                     map[*memConn]struct{}
}

// window bounds the bytes in flight in one direction of a connection, like a TCP window.
const window = 4 << 20

// NewNetwork returns an empty in-memory network.
func NewNetwork() *Network {
	n := &Network{listeners: map[string]*memListener{}, nextPort: 20000, conns: map[*memConn]struct{}{}}
	n.cond = sync.NewCond(&n.mu)
	return n
}

// Listen returns a listener at addr ("host:port"; port 0 picks a free one).
func (n *Network) Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if port == "0" || port == "" {
		n.nextPort++
		port = strconv.Itoa(n.nextPort)
	}
	addr = net.JoinHostPort(host, port)
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("apitest: network: %s is in use", addr)
	}
	l := &memListener{n: n, addr: memAddr(addr)}
	n.listeners[addr] = l
	return l, nil
}

// Dial connects to a listener of the network: the apiclient.Config.Dial of a client of it.
// During a Partition it waits for ctx; during a Disconnect, or without a listener at addr,
// it fails with ECONNREFUSED.
func (n *Network) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	refused := &net.OpError{Op: "dial", Net: network, Addr: memAddr(addr), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	n.mu.Lock()
	if n.partitioned {
		n.mu.Unlock()
		<-ctx.Done() // a lost SYN: nothing answers, before or after the partition heals
		return nil, &net.OpError{Op: "dial", Net: network, Addr: memAddr(addr), Err: ctx.Err()}
	}
	l := n.listeners[addr]
	if l == nil || l.closed || n.disconnected {
		n.mu.Unlock()
		return nil, refused
	}
	client, server := n.pairLocked(addr)
	l.queue = append(l.queue, server)
	n.cond.Broadcast()
	n.mu.Unlock()
	return client, nil
}

// Partition cuts the network between every client and server until heal is called (heal
// may be called any number of times). See Network.
func (n *Network) Partition() (heal func()) {
	n.mu.Lock()
	n.partitioned = true
	for c := range n.conns {
		c.held = true
	}
	n.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			n.partitioned = false
			for c := range n.conns {
				c.held = false
			}
			n.cond.Broadcast()
			n.mu.Unlock()
		})
	}
}

// Disconnect resets every open connection and refuses new ones until restore is called (it
// may be called any number of times). See Network.
func (n *Network) Disconnect() (restore func()) {
	n.mu.Lock()
	n.disconnected = true
	for c := range n.conns {
		c.reset = true
	}
	n.cond.Broadcast()
	n.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			n.disconnected = false
			n.mu.Unlock()
		})
	}
}

// pairLocked makes the two ends of a new connection to addr.
func (n *Network) pairLocked(addr string) (client, server *memConn) {
	n.nextPort++
	caddr := memAddr("127.0.0.1:" + strconv.Itoa(n.nextPort))
	ab, ba := &halfPipe{}, &halfPipe{}
	client = &memConn{n: n, local: caddr, remote: memAddr(addr), in: ba, out: ab}
	server = &memConn{n: n, local: memAddr(addr), remote: caddr, in: ab, out: ba}
	client.peer, server.peer = server, client
	n.conns[client] = struct{}{}
	n.conns[server] = struct{}{}
	return client, server
}

type memAddr string

func (a memAddr) Network() string { return "tcp" }
func (a memAddr) String() string  { return string(a) }

type memListener struct {
	n      *Network
	addr   memAddr
	queue  []*memConn
	closed bool
}

func (l *memListener) Accept() (net.Conn, error) {
	n := l.n
	n.mu.Lock()
	defer n.mu.Unlock()
	for len(l.queue) == 0 && !l.closed {
		n.cond.Wait()
	}
	if l.closed {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: net.ErrClosed}
	}
	c := l.queue[0]
	l.queue = l.queue[1:]
	return c, nil
}

func (l *memListener) Close() error {
	n := l.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for _, c := range l.queue {
		c.closeLocked()
	}
	l.queue = nil
	delete(n.listeners, string(l.addr))
	n.cond.Broadcast()
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }

// halfPipe is one direction of a connection.
type halfPipe struct {
	buf []byte
	eof bool // the writer closed: EOF once buf is drained
}

// memConn is one end of an in-memory connection. Every field is guarded by Network.mu.
type memConn struct {
	n             *Network
	local, remote memAddr
	in, out       *halfPipe
	peer          *memConn
	closed        bool
	// held: a partition holds the connection's traffic; reset: its host went away.
	held, reset bool

	readDeadline, writeDeadline time.Time
	// readTimer and writeTimer wake the waiters when a deadline passes.
	readTimer, writeTimer *time.Timer
}

var errReset = os.NewSyscallError("read", syscall.ECONNRESET)

func (c *memConn) Read(p []byte) (int, error) {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		switch {
		case c.closed:
			return 0, c.opErr("read", net.ErrClosed)
		case c.reset:
			return 0, c.opErr("read", errReset)
		case !c.readDeadline.IsZero() && !time.Now().Before(c.readDeadline):
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		case c.held:
		case len(c.in.buf) > 0:
			k := copy(p, c.in.buf)
			c.in.buf = c.in.buf[k:]
			if len(c.in.buf) == 0 {
				c.in.buf = nil
			}
			n.cond.Broadcast() // room for the writer
			return k, nil
		case c.in.eof:
			return 0, io.EOF
		}
		n.cond.Wait()
	}
}

func (c *memConn) Write(p []byte) (int, error) {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	written := 0
	for written < len(p) {
		switch {
		case c.closed:
			return written, c.opErr("write", net.ErrClosed)
		case c.reset:
			return written, c.opErr("write", os.NewSyscallError("write", syscall.ECONNRESET))
		case c.peer.closed && !c.held:
			return written, c.opErr("write", os.NewSyscallError("write", syscall.EPIPE))
		case !c.writeDeadline.IsZero() && !time.Now().Before(c.writeDeadline):
			return written, c.opErr("write", os.ErrDeadlineExceeded)
		case len(c.out.buf) < window:
			k := min(len(p)-written, window-len(c.out.buf))
			c.out.buf = append(c.out.buf, p[written:written+k]...)
			written += k
			n.cond.Broadcast()
			continue
		}
		n.cond.Wait()
	}
	return written, nil
}

func (c *memConn) Close() error {
	c.n.mu.Lock()
	defer c.n.mu.Unlock()
	c.closeLocked()
	return nil
}

func (c *memConn) closeLocked() {
	if c.closed {
		return
	}
	c.closed = true
	c.out.eof = true
	for _, t := range []*time.Timer{c.readTimer, c.writeTimer} {
		if t != nil {
			t.Stop()
		}
	}
	delete(c.n.conns, c)
	c.n.cond.Broadcast()
}

func (c *memConn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.n.mu.Lock()
	defer c.n.mu.Unlock()
	c.readDeadline = t
	c.readTimer = c.wakeAtLocked(c.readTimer, t)
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.n.mu.Lock()
	defer c.n.mu.Unlock()
	c.writeDeadline = t
	c.writeTimer = c.wakeAtLocked(c.writeTimer, t)
	return nil
}

// wakeAtLocked replaces timer by one that wakes the waiters at t (none for a zero t), so
// that a wait past its deadline ends.
func (c *memConn) wakeAtLocked(timer *time.Timer, t time.Time) *time.Timer {
	if timer != nil {
		timer.Stop()
	}
	c.n.cond.Broadcast()
	if t.IsZero() || c.closed {
		return nil
	}
	n := c.n
	return time.AfterFunc(time.Until(t), func() {
		n.mu.Lock()
		n.cond.Broadcast()
		n.mu.Unlock()
	})
}
