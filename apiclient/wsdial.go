package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// The network side of a WebSocket watch; gorilla/websocket only frames the messages. The
// connection is opened as the HTTP transport opens its own (the same proxy, the same dial
// and TLS handshake deadlines), and the handshake's answer is judged at its status line and
// headers, never by its body.

// wsConnector opens the connection of a WebSocket handshake: directly, or through the proxy
// the HTTP transport would use for the same URL (http:// or https:// with CONNECT, socks5://
// or socks5h://), with the client's dial (and its deadline), then TLS within the TLS
// handshake deadline.
type wsConnector struct {
	proxy func(*http.Request) (*url.URL, error)
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	// tls is the server's TLS configuration, HTTP/1.1 only; proxyTLS that of an https://
	// proxy (the transport's, as net/http uses it).
	tls, proxyTLS *tls.Config
	tlsTimeout    time.Duration
	// deadline reports a deadline that passed (the client logs it).
	deadline func(*TimeoutError)
}

// connect opens a connection to addr (host:port) for the handshake of a watch of path; the
// connection is closed when ctx is done (the handshake's deadline, the watch's end).
func (w *wsConnector) connect(ctx context.Context, secure bool, addr, path string) (net.Conn, error) {
	scheme := "http"
	if secure {
		scheme = "https"
	}
	pu, err := w.proxy(&http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: scheme, Host: addr, Path: path}, Header: http.Header{}})
	if err != nil {
		return nil, fmt.Errorf("apiclient: proxy of %s: %w", addr, err)
	}
	hop := addr
	if pu != nil {
		hop = proxyAddr(pu)
	}
	raw, err := w.dial(ctx, "tcp", hop)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { raw.Close() })
	conn := raw
	if pu != nil {
		if conn, err = w.throughProxy(ctx, conn, pu, addr, path); err != nil {
			return nil, err
		}
	}
	if secure {
		host, _, _ := net.SplitHostPort(addr)
		if conn, err = w.handshakeTLS(ctx, conn, w.tls, host, path); err != nil {
			return nil, err
		}
	}
	return conn, nil
}

// proxyAddr is the host:port of a proxy URL, with its scheme's default port.
func proxyAddr(pu *url.URL) string {
	if pu.Port() != "" {
		return pu.Host
	}
	port := "80"
	switch pu.Scheme {
	case "https":
		port = "443"
	case "socks5", "socks5h":
		port = "1080"
	}
	return net.JoinHostPort(pu.Hostname(), port)
}

// throughProxy asks the proxy on conn for a tunnel to addr.
func (w *wsConnector) throughProxy(ctx context.Context, conn net.Conn, pu *url.URL, addr, path string) (net.Conn, error) {
	tunnel, err := conn, error(nil)
	switch pu.Scheme {
	case "https":
		if tunnel, err = w.handshakeTLS(ctx, conn, w.proxyTLS, pu.Hostname(), path); err != nil {
			return nil, err
		}
		fallthrough
	case "http":
		tunnel, err = httpConnect(tunnel, pu, addr)
	case "socks5", "socks5h":
		err = socks5Connect(conn, pu, addr)
	default:
		err = fmt.Errorf("apiclient: proxy scheme %q is not supported (http, https, socks5)", pu.Scheme)
	}
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return tunnel, nil
}

// handshakeTLS runs the TLS handshake on conn within the TLS handshake deadline, as the HTTP
// transport does (net/http's TLSHandshakeTimeout).
func (w *wsConnector) handshakeTLS(ctx context.Context, conn net.Conn, cfg *tls.Config, host, path string) (net.Conn, error) {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if w.tlsTimeout > 0 {
		hctx, cancel = context.WithTimeout(ctx, w.tlsTimeout)
	}
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		if ctx.Err() == nil && hctx.Err() != nil {
			te := &TimeoutError{Op: "TLS handshake", Method: http.MethodGet, Path: path, Limit: w.tlsTimeout, Setting: "Config.TLSHandshakeTimeout"}
			w.deadline(te)
			return nil, te
		}
		return nil, err
	}
	return tc, nil
}

// maxProxyAnswer bounds the headers of a proxy's answer to CONNECT, and maxAnswerHead those
// of an answer to a WebSocket handshake.
const (
	maxProxyAnswer = 64 << 10
	maxAnswerHead  = 1 << 20
)

// httpConnect asks an HTTP proxy for a tunnel to addr (CONNECT), with basic authentication
// when the proxy URL has a user.
func httpConnect(conn net.Conn, pu *url.URL, addr string) (net.Conn, error) {
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u := pu.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	if err := req.Write(conn); err != nil {
		return nil, err
	}
	lr := &io.LimitedReader{R: conn, N: maxProxyAnswer}
	br := bufio.NewReader(lr)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("apiclient: proxy %s answered CONNECT with more than %d bytes of headers", pu.Host, maxProxyAnswer)
		}
		return nil, fmt.Errorf("apiclient: proxy %s: reading its answer to CONNECT: %w", pu.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("apiclient: proxy %s refused CONNECT to %s: %s", pu.Host, addr, resp.Status)
	}
	if br.Buffered() > 0 {
		// Bytes of the server, which speaks only after the client: kept in order anyway.
		rest, _ := br.Peek(br.Buffered())
		return &prefixConn{Conn: conn, prefix: bytes.Clone(rest)}, nil
	}
	return conn, nil
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// socks5Connect asks a SOCKS5 proxy (RFC 1928) for a connection to addr, with
// username/password authentication (RFC 1929) when the proxy URL has a user. The host name
// goes to the proxy unresolved, as net/http sends it.
func socks5Connect(conn net.Conn, pu *url.URL, addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := net.LookupPort("tcp", portStr)
	if err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("apiclient: SOCKS5 proxy %s: "+format, append([]any{pu.Host}, args...)...)
	}
	methods := []byte{0x00}
	if pu.User != nil {
		methods = []byte{0x00, 0x02}
	}
	if _, err := conn.Write(append([]byte{0x05, byte(len(methods))}, methods...)); err != nil {
		return err
	}
	var b [2]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fail("greeting: %w", err)
	}
	switch {
	case b[0] != 0x05:
		return fail("not a SOCKS5 answer (version %d)", b[0])
	case b[1] == 0x02 && pu.User != nil:
		u := pu.User.Username()
		pw, _ := pu.User.Password()
		if len(u) > 255 || len(pw) > 255 {
			return fail("user name or password longer than 255 bytes")
		}
		msg := append([]byte{0x01, byte(len(u))}, u...)
		msg = append(append(msg, byte(len(pw))), pw...)
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, b[:]); err != nil {
			return fail("authentication: %w", err)
		}
		if b[1] != 0x00 {
			return fail("authentication refused")
		}
	case b[1] != 0x00:
		return fail("no acceptable authentication method (%#x)", b[1])
	}
	req := []byte{0x05, 0x01, 0x00}
	if ip := net.ParseIP(host); ip.To4() != nil {
		req = append(append(req, 0x01), ip.To4()...)
	} else if ip != nil {
		req = append(append(req, 0x04), ip.To16()...)
	} else {
		if len(host) > 255 {
			return fail("host name longer than 255 bytes")
		}
		req = append(append(req, 0x03, byte(len(host))), host...)
	}
	req = append(req, byte(port>>8), byte(port))
	if _, err := conn.Write(req); err != nil {
		return err
	}
	var head [4]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return fail("connect: %w", err)
	}
	if head[1] != 0x00 {
		return fail("refused the connection to %s (reply %d)", addr, head[1])
	}
	var skip int
	switch head[3] {
	case 0x01:
		skip = 4
	case 0x04:
		skip = 16
	case 0x03:
		if _, err := io.ReadFull(conn, b[:1]); err != nil {
			return fail("connect: %w", err)
		}
		skip = int(b[0])
	default:
		return fail("bad address type %d in its reply", head[3])
	}
	if _, err := io.CopyN(io.Discard, conn, int64(skip+2)); err != nil {
		return fail("connect: %w", err)
	}
	return nil
}

// answerConn is the connection under a WebSocket handshake. gorilla/websocket reads the
// answer itself and, when it is not a 101, reads up to 1 KiB of its body before returning:
// a server or proxy that answers with a 200 and a streaming body (a watch over plain HTTP,
// from a proxy that dropped the Upgrade header) would hold the handshake there until a KiB
// of events came, or its deadline passed. answerConn decides at the headers instead: after
// those of any answer but a 101 the stream ends (io.EOF), except for the body of an error
// answer of declared length (a Status), so the handshake returns at once with the answer's
// status and headers. After a 101 it passes everything through.
type answerConn struct {
	net.Conn
	state  answerState
	head   []byte // the status line and headers so far
	remain int64  // bytes of an error answer's body still to pass
}

type answerState uint8

const (
	answerHead answerState = iota
	answerPass
	answerBody
	answerEnded
)

// errAnswerHeadTooLarge: the answer's headers went on past maxAnswerHead.
var errAnswerHeadTooLarge = fmt.Errorf("apiclient: the answer to a WebSocket handshake has more than %d bytes of headers", maxAnswerHead)

func (c *answerConn) Read(p []byte) (int, error) {
	switch c.state {
	case answerPass:
		return c.Conn.Read(p)
	case answerEnded:
		return 0, io.EOF
	case answerBody:
		if c.remain <= 0 {
			c.state = answerEnded
			return 0, io.EOF
		}
		if int64(len(p)) > c.remain {
			p = p[:c.remain]
		}
		n, err := c.Conn.Read(p)
		c.remain -= int64(n)
		return n, err
	}
	n, err := c.Conn.Read(p)
	if n == 0 {
		return n, err
	}
	from := max(len(c.head)-2, 0)
	c.head = append(c.head, p[:n]...)
	end := headEnd(c.head, from)
	if end < 0 {
		if len(c.head) > maxAnswerHead {
			return 0, errAnswerHeadTooLarge
		}
		return n, err
	}
	after := len(c.head) - end // bytes of p past the headers
	code, length := answerOf(c.head[:end])
	c.head = nil
	switch {
	case code == http.StatusSwitchingProtocols:
		c.state = answerPass
		return n, err
	case code >= 300 && length >= 0:
		pass := min(int64(after), length)
		c.remain, c.state = length-pass, answerBody
		return n - after + int(pass), err
	}
	c.state = answerEnded
	return n - after, err
}

// headEnd returns the index just past the empty line that ends the headers in b (CRLF or
// bare LF line ends, as net/http reads them), searching from from; -1 if it has not come.
func headEnd(b []byte, from int) int {
	for i := from; i < len(b); i++ {
		if b[i] != '\n' || i == 0 {
			continue
		}
		if b[i-1] == '\n' {
			return i + 1
		}
		if b[i-1] == '\r' && i >= 2 && b[i-2] == '\n' {
			return i + 1
		}
	}
	return -1
}

// answerOf returns the status code of an answer's head and its body's declared length (-1
// for none: chunked, or until the connection closes); 0 if the head cannot be read (gorilla
// reports that itself).
func answerOf(head []byte) (code int, length int64) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
	if err != nil {
		return 0, -1
	}
	if len(resp.TransferEncoding) > 0 {
		return resp.StatusCode, -1
	}
	return resp.StatusCode, resp.ContentLength
}
