package apitest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/admission"
)

// InitialEventsMode says how the server answers watches with sendInitialEvents=true.
type InitialEventsMode int

const (
	// InitialEventsSupported streams the current state as ADDED events and ends it with a
	// BOOKMARK annotated k8s.io/initial-events-end, like a kube-apiserver with WatchList.
	InitialEventsSupported InitialEventsMode = iota
	// InitialEventsRefused answers 422 Invalid, like a server whose WatchList feature gate
	// is off.
	InitialEventsRefused
	// InitialEventsIgnored serves the watch as if sendInitialEvents had not been sent (no
	// end bookmark ever comes), like a server too old to know the parameter.
	InitialEventsIgnored
)

// Options are the optional settings of a Server (NewServerWithOptions, Start). The zero
// value is a plain-HTTP server without authentication and with the defaults documented on
// each field.
type Options struct {
	// TLS serves HTTPS (HTTP/2 and HTTP/1.1) with a certificate signed by a CA generated for
	// this server (Server.CAPEM, Config().TLS.CAData).
	TLS bool
	// NoHTTP2 serves TLS without HTTP/2 (ALPN offers http/1.1 only), as some proxies and load
	// balancers in front of API servers do.
	NoHTTP2 bool
	// Token, if set, is the bearer token every request must carry (401 otherwise), unless
	// it authenticates otherwise (Tokens, ClientCAs). Its user is User in the group
	// system:masters.
	Token string
	// Tokens are further bearer tokens and the users they authenticate, as the
	// kube-apiserver's --token-auth-file. Setting it requires authentication as Token does.
	Tokens map[string]UserInfo
	// ServingCertificate, if set, is the certificate a TLS server serves (TLS is then on)
	// instead of one signed by a CA of its own; CAPEM, Config and Kubeconfig then carry no
	// CA (the caller knows which one signed it), as a kube-apiserver's --tls-cert-file.
	ServingCertificate *tls.Certificate
	// ClientCAs, if set, makes a TLS server ask for client certificates and authenticate
	// one signed by these CAs as the user of its subject (CommonName the name,
	// Organization the groups), as the kube-apiserver's --client-ca-file. Setting it
	// requires authentication as Token does.
	ClientCAs *x509.CertPool
	// ServiceAccountIssuer is the issuer of the service account tokens the server issues
	// (serviceaccounts/token) and their default audience, as --service-account-issuer
	// (default DefaultServiceAccountIssuer).
	ServiceAccountIssuer string
	// HistorySize is the number of events kept per resource for watches from an older
	// resourceVersion and for continue tokens (default 10000). A watcher that falls
	// further behind than this is closed, as the real server closes slow watchers.
	HistorySize int
	// BookmarkInterval is the period of BOOKMARK events on watches that allow them
	// (default 1 minute, roughly the kube-apiserver's).
	BookmarkInterval time.Duration
	// ProgressNotify makes periodic bookmarks carry the server's global resourceVersion, as
	// a kube-apiserver whose etcd sends frequent progress notifications. By default a
	// bookmark carries the resourceVersion of the resource's latest event and is sent only
	// when that is newer than what the watch has delivered (so a watch whose events all
	// reached it gets none), as the kube-apiserver's watch cache does.
	ProgressNotify bool
	// WatchTimeout bounds watches that carry no timeoutSeconds (default 30 minutes, the
	// kube-apiserver's min-request-timeout).
	WatchTimeout time.Duration
	// TooLargeResourceVersionWait is how long a request for a resourceVersion newer than the
	// server's waits for it before failing with 504 ResourceVersionTooLarge (default 3 s
	// like the kube-apiserver; negative means do not wait).
	TooLargeResourceVersionWait time.Duration
	// RefuseWebSocket makes the server answer WebSocket upgrades with 501 Not Implemented
	// (no upgrade), so that clients must fall back to chunked HTTP.
	RefuseWebSocket bool
	// InitialEvents selects the answer to sendInitialEvents=true.
	InitialEvents InitialEventsMode
	// NoWatchCache serves lists as a kube-apiserver without a watch cache (--watch-cache=false,
	// or a resource whose cache is disabled): a list at resourceVersion=0 goes to storage and
	// honours limit, so it comes back paged with a continue token. By default, as from the
	// watch cache, resourceVersion=0 returns everything in one page whatever the limit.
	NoWatchCache bool
	// NoShardSelector serves as a kube-apiserver without the ShardedListAndWatch feature
	// gate (alpha in 1.36, off by default there): the shardSelector parameter of lists and
	// watches is ignored and lists carry no metadata.shardInfo. By default apitest honours
	// it as the kube-apiserver with the gate on (shardselector.go).
	NoShardSelector bool
	// NoDefaultNamespaces skips creating what a fresh kube-apiserver creates: the
	// namespaces default, kube-system, kube-public and kube-node-lease, and the kubernetes
	// Service in default (ClusterIP 10.0.0.1, port 443 "https" to the server's own port).
	NoDefaultNamespaces bool
	// KubernetesVersion is the kube-apiserver release the server answers as where releases
	// differ on the wire ("v1.36.3", "v1.37.2", "1.37": 1.36 and 1.37 are served; release.go
	// lists the differences): /version, the simulated kubelets' version, gzip of streaming
	// lists, the checks of patch bodies and remainingItemCount under a shard selector.
	// Default: the release apitest's schema table was recorded from (v1.37.2, see
	// DefaultKubernetesVersion). Start fails on another release.
	KubernetesVersion string
	// CBOR serves application/cbor (and application/cbor-seq watch streams) to clients
	// that ask for it, as kube-apiserver 1.37 does with --feature-gates=CBORServingAndStorage=true;
	// without it such a request is answered 406, as there. Request bodies stay JSON (or
	// YAML, protobuf). Default: off, as in kube-apiserver 1.37.
	CBOR bool
	// RequestLogSize bounds the request log (default 100000 records; the oldest are dropped).
	RequestLogSize int
	// Logger receives one debug line per request (default: discard).
	Logger *slog.Logger
	// Addr is the listen address (default "127.0.0.1:0"; see Network and InMemory).
	Addr string
	// CRDWatchTeardownDelay is how long after a CustomResourceDefinition is deleted, or its
	// spec changes, the watches open on its resource end (cleanly, without an ERROR event):
	// default DefaultCRDWatchTeardownDelay (1 s), as the kube-apiserver; negative: at once.
	CRDWatchTeardownDelay time.Duration
	// InMemory serves over in-memory connections instead of a loopback port, so that the
	// server, its clients and a controller can run inside a testing/synctest bubble (where
	// a goroutine waiting on a socket would keep the fake clock from moving): it is Network
	// set to a network of the server's own. The URL names no host (http://apitest.invalid,
	// or https:// with TLS): only the server's own Config and Client reach it, kubectl
	// cannot. Create the server inside the bubble and use it only there.
	InMemory bool
	// Network, if set, is the in-memory network the server listens on (at Addr, default
	// "apitest.invalid:0": a port of its own) instead of a loopback port; Config's Dial
	// connects to it, over HTTP/2 or WebSocket as over TCP. Use it to run several servers,
	// or a server and a test's own handlers, inside one testing/synctest bubble, and for its
	// faults (Network.Partition, Network.Disconnect).
	Network *Network
}

// Server is an in-process Kubernetes API server listening on loopback. Create it with
// NewServer and stop it with Close. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, e.g. "http://127.0.0.1:41234" or "https://...".
	URL string

	opts    Options
	rel     release // Options.KubernetesVersion
	nodes   *Nodes  // StartNodes (s.mu)
	caPEM   []byte
	ln      net.Listener
	httpSrv *http.Server
	ctx     context.Context
	cancel  context.CancelFunc
	track   tracker // running handlers and open connections
	closeMu sync.Mutex
	closed  bool

	// mu guards the store, the registry and the watchers.
	mu        sync.Mutex
	rv        uint64
	resources map[string]*resource
	order     []*resource
	watchers  map[int64]*watcher
	nextWatch int64
	writeWait map[string]time.Duration // resource name ("" = all) → delay per write
	// hasWriteWait lets the hot paths skip s.mu when no write delay is set.
	hasWriteWait atomic.Bool
	// admission holds the allocations of Services (cluster IPs, node ports).
	admission admission.Chain
	// openapi caches the OpenAPI v3 documents, built for openapiFor resources.
	openapi    map[string]openAPIDoc
	openapiFor int
	// crdRes is the CustomResourceDefinition resource; teardowns are the pending ends of
	// the watches of a custom resource whose storage was replaced or removed (crdserve.go).
	crdRes    *resource
	teardowns map[*time.Timer]struct{}

	// tokens are the service account tokens issued (tokens.go).
	tokens tokenIssuer

	// logMu guards the logs, the fault rules and the change broadcast.
	logMu     sync.Mutex
	requests  []*Request
	reqSeq    int64
	faults    []FaultRecord
	failRules []*failRule
	// hungRelease ends the requests HangRequests holds (ReleaseHungRequests); hung counts them.
	hungRelease chan struct{}
	hung        int
	denied      []accessRule // Deny
	accessSeq   int
	changed     chan struct{}
	watchSubs   []watchSub

	// clients: kills and write hooks of named clients (clients.go); holds their views
	// (holds.go, under mu).
	clients clientState
	holds   []*hold
	merges  map[mergeKey]map[uint64]*event
}

// NewServer starts a server with the default options on a free loopback port. It panics if
// it cannot listen (like httptest.NewServer); use Start for an error instead.
func NewServer() *Server { return NewServerWithOptions(Options{}) }

// NewServerWithOptions is NewServer with options.
func NewServerWithOptions(o Options) *Server {
	s, err := Start(o)
	if err != nil {
		panic(err)
	}
	return s
}

// Start is NewServerWithOptions returning an error instead of panicking: it cannot listen
// on Options.Addr, or cannot generate the TLS certificates.
func Start(o Options) (*Server, error) {
	if o.HistorySize <= 0 {
		o.HistorySize = 10000
	}
	if o.BookmarkInterval <= 0 {
		o.BookmarkInterval = time.Minute
	}
	if o.WatchTimeout <= 0 {
		o.WatchTimeout = 30 * time.Minute
	}
	if o.TooLargeResourceVersionWait == 0 {
		o.TooLargeResourceVersionWait = 3 * time.Second
	}
	if o.RequestLogSize <= 0 {
		o.RequestLogSize = 100000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rel, err := parseRelease(o.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	o.Network, o.Addr = listenAddr(o)
	if o.CRDWatchTeardownDelay == 0 {
		o.CRDWatchTeardownDelay = DefaultCRDWatchTeardownDelay
	}
	s := &Server{
		opts:      o,
		rel:       rel,
		resources: map[string]*resource{},
		watchers:  map[int64]*watcher{},
		writeWait: map[string]time.Duration{},
		changed:   make(chan struct{}),
		rv:        1,
		teardowns: map[*time.Timer]struct{}{},
	}
	for _, t := range builtinResources() {
		if err := s.addResourceLocked(t); err != nil {
			return nil, err
		}
	}
	s.crdRes = s.resources["customresourcedefinitions."+crdGroup]
	ln, err := listen(o)
	if err != nil {
		return nil, err
	}
	if !o.NoDefaultNamespaces {
		if err := s.createSystemObjects(ln.Addr()); err != nil {
			ln.Close()
			return nil, err
		}
	}
	s.ln = ln
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.httpSrv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          nil,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnState:         s.connState,
	}
	scheme := "http"
	if o.TLS || o.ServingCertificate != nil {
		scheme = "https"
		if err := s.configureTLS(); err != nil {
			ln.Close()
			return nil, err
		}
		o.TLS = true
	}
	s.URL = scheme + "://" + ln.Addr().String()
	if a := ln.Addr().String(); scheme == "http" && a == memoryHost+":80" || scheme == "https" && a == memoryHost+":443" {
		s.URL = scheme + "://" + memoryHost // the scheme's own port
	}
	s.track.addHandler()
	go func() {
		defer s.track.doneHandler()
		var err error
		if o.TLS {
			err = s.httpSrv.ServeTLS(ln, "", "")
		} else {
			err = s.httpSrv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Logger.Error("apitest: serve", "err", err)
		}
	}()
	return s, nil
}

// configureTLS sets up the server's TLS: the certificate it serves (Options.ServingCertificate,
// or one signed by a CA of its own), ALPN, and the client certificates it asks for.
func (s *Server) configureTLS() error {
	o := &s.opts
	o.TLS = true
	var cert tls.Certificate
	if o.ServingCertificate != nil {
		cert = *o.ServingCertificate
	} else {
		var caPEM []byte
		var err error
		if cert, caPEM, err = newCertificates(); err != nil {
			return err
		}
		s.caPEM = caPEM
	}
	protos := []string{"h2", "http/1.1"}
	if o.NoHTTP2 {
		protos = protos[1:]
		s.httpSrv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no h2 either way
	}
	s.httpSrv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos, MinVersion: tls.VersionTLS12}
	if o.ClientCAs != nil {
		// As the kube-apiserver: any certificate is taken, and one that does not verify
		// is answered 401 (authn.go), not refused in the handshake.
		s.httpSrv.TLSConfig.ClientAuth = tls.RequestClientCert
	}
	return nil
}

// listenAddr returns the network (InMemory's own, or Network) and the address the server
// listens at: Addr, else a free port on loopback, or the scheme's port of apitest.invalid
// for InMemory (its URL names no port), or a free one on a Network.
func listenAddr(o Options) (*Network, string) {
	netw, addr := o.Network, o.Addr
	if o.InMemory && netw == nil {
		netw = NewNetwork()
		if addr == "" {
			addr = memoryHost + ":80"
			if o.TLS {
				addr = memoryHost + ":443"
			}
		}
	}
	switch {
	case addr != "":
	case netw != nil:
		addr = memoryHost + ":0"
	default:
		addr = "127.0.0.1:0"
	}
	return netw, addr
}

// listen opens the server's listener, on its Network or on a TCP port.
func listen(o Options) (net.Listener, error) {
	var ln net.Listener
	var err error
	if o.Network != nil {
		ln, err = o.Network.Listen(o.Addr)
	} else {
		ln, err = net.Listen("tcp", o.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("apitest: listen: %w", err)
	}
	return ln, nil
}

func (s *Server) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.track.addConn(c)
	case http.StateClosed, http.StateHijacked:
		s.track.doneConn(c)
	}
}

// tracker counts running handlers and open connections so that Close can wait for both.
type tracker struct {
	mu       sync.Mutex
	cond     *sync.Cond
	handlers int
	conns    map[net.Conn]struct{}
	closing  bool
}

func (t *tracker) init() {
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
		t.conns = map[net.Conn]struct{}{}
	}
}

// addHandler registers a running handler; it returns false once Close has begun.
func (t *tracker) addHandler() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	if t.closing {
		return false
	}
	t.handlers++
	return true
}

func (t *tracker) doneHandler() {
	t.mu.Lock()
	t.handlers--
	t.cond.Broadcast()
	t.mu.Unlock()
}

func (t *tracker) addConn(c net.Conn) {
	t.mu.Lock()
	t.init()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
}

func (t *tracker) doneConn(c net.Conn) {
	t.mu.Lock()
	t.init()
	delete(t.conns, c)
	t.cond.Broadcast()
	t.mu.Unlock()
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	t.init()
	t.closing = true
	for t.handlers > 0 || len(t.conns) > 0 {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// Close stops the server: it ends every watch, closes every connection and returns when
// every goroutine of the server has stopped. Close is idempotent.
func (s *Server) Close() {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return
	}
	s.closed = true
	s.closeMu.Unlock()
	s.mu.Lock()
	nodes := s.nodes
	s.mu.Unlock()
	if nodes != nil {
		nodes.Stop()
	}
	// Listeners first, as when a kube-apiserver dies: a client that sees its watch end
	// must find the port closed, not reach a server that is halfway down and drops the
	// new watch at once (the client would take it for a "very short" watch and relist).
	s.httpSrv.Close()
	s.cancel()
	s.mu.Lock()
	for t := range s.teardowns {
		t.Stop()
	}
	s.mu.Unlock()
	s.track.closeAndWait()
}

// Config returns an apiclient.Config for this server: host, token, CA, and the namespace
// "default" (as the kubeconfig's context).
func (s *Server) Config() *apiclient.Config {
	c := &apiclient.Config{Host: s.URL, BearerToken: s.opts.Token, Namespace: "default"}
	// A plain-HTTP server on loopback: its token may travel in clear text.
	c.AllowCredentialsOverHTTP = s.caPEM == nil && s.opts.Token != ""
	if s.opts.Network != nil {
		c.Dial = s.opts.Network.Dial
	}
	if s.caPEM != nil {
		c.TLS.CAData = append([]byte(nil), s.caPEM...)
	}
	return c
}

// CAPEM returns the PEM-encoded CA certificate of a TLS server (nil without TLS).
func (s *Server) CAPEM() []byte { return append([]byte(nil), s.caPEM...) }

// CertPool returns a pool holding the server's CA (nil without TLS).
func (s *Server) CertPool() *x509.CertPool {
	if s.caPEM == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(s.caPEM)
	return p
}

// Token returns the bearer token the server requires ("" if none).
func (s *Server) Token() string { return s.opts.Token }

// Client returns an *http.Client that trusts the server's CA and sends its token. Call
// CloseIdleConnections on it (or its Transport) when done.
func (s *Server) Client() *http.Client {
	tr := &http.Transport{ForceAttemptHTTP2: true}
	if s.opts.Network != nil {
		tr.DialContext = s.opts.Network.Dial
	}
	if s.caPEM != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: s.CertPool()}
	}
	var rt http.RoundTripper = tr
	if s.opts.Token != "" {
		rt = &tokenTransport{token: s.opts.Token, base: tr}
	}
	return &http.Client{Transport: rt}
}

type tokenTransport struct {
	token string
	base  *http.Transport
}

func (t *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the underlying transport.
func (t *tokenTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// Kubeconfig returns a kubeconfig (YAML) with one cluster, user and context named
// "apitest", pointing at this server with its CA and token.
func (s *Server) Kubeconfig() []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: apitest\n  cluster:\n")
	fmt.Fprintf(&b, "    server: %s\n", s.URL)
	if s.caPEM != nil {
		fmt.Fprintf(&b, "    certificate-authority-data: %s\n", base64.StdEncoding.EncodeToString(s.caPEM))
	}
	b.WriteString("users:\n- name: apitest\n  user:")
	if s.opts.Token != "" {
		fmt.Fprintf(&b, "\n    token: %q\n", s.opts.Token)
	} else {
		b.WriteString(" {}\n")
	}
	b.WriteString("contexts:\n- name: apitest\n  context:\n    cluster: apitest\n    user: apitest\n    namespace: default\n")
	b.WriteString("current-context: apitest\n")
	return []byte(b.String())
}

// WriteKubeconfig writes Kubeconfig to path with mode 0600.
func (s *Server) WriteKubeconfig(path string) error {
	return os.WriteFile(path, s.Kubeconfig(), 0o600)
}
