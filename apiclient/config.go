package apiclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/informerkit/informerkit/tracing"
)

// Config says how to reach and authenticate to one API server. LoadConfig builds it from a
// kubeconfig or the in-cluster environment; tests build it directly (apitest.Server.Config).
type Config struct {
	// Host is the server's base URL, e.g. "https://127.0.0.1:6443".
	Host string
	// BearerToken is sent as "Authorization: Bearer <token>". It never appears in errors or logs.
	BearerToken string
	// BearerTokenFile is re-read when it changes (projected service-account tokens rotate);
	// it takes precedence over BearerToken.
	BearerTokenFile string
	// Username and Password are sent as HTTP basic authentication.
	Username string
	Password string
	// Exec runs a client.authentication.k8s.io/v1 credential plugin.
	Exec *ExecConfig
	// AllowCredentialsOverHTTP lets the credentials above travel to a plain http:// Host.
	// Default false: New refuses such a Config with ErrCredentialsOverHTTP. When set, a
	// warning is logged once per host (not for loopback hosts).
	AllowCredentialsOverHTTP bool
	// FollowCrossHostRedirects makes the client follow a redirect to another scheme, host or
	// port than Host, without credentials. Default false: such a redirect fails the request
	// with a *RedirectError. Redirects within Host are followed either way.
	FollowCrossHostRedirects bool
	// TLS configures server verification and client certificates.
	TLS TLSConfig
	// ProxyURL, if set, sends requests through this HTTP(S) or SOCKS5 proxy; without it the
	// environment's (HTTPS_PROXY, NO_PROXY...) applies. WebSocket handshakes go through the
	// same proxy (a CONNECT tunnel for http:// and https:// proxies).
	ProxyURL string
	// Dial, if set, opens the client's network connections (HTTP and WebSocket, to the
	// server or to the proxy) instead of a net.Dialer: for tunnels, or for tests that serve
	// an API in memory (apitest.Options.InMemory). It must honour ctx. DialTimeout bounds it
	// either way.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// DialTimeout bounds the opening of a connection (0 means DefaultDialTimeout, 30 s;
	// negative: no limit but the request's); TLSHandshakeTimeout bounds a TLS handshake, with
	// the server or an https:// proxy (0 means DefaultTLSHandshakeTimeout, 10 s; negative:
	// none). Both apply to WebSocket handshakes as to HTTP requests, and fail the request
	// with a *TimeoutError. client-go's transport has the same two defaults.
	DialTimeout         time.Duration
	TLSHandshakeTimeout time.Duration
	// QPS and Burst limit non-watch requests on the client side (0 means the defaults).
	QPS   float32
	Burst int
	// UserAgent is sent with every request ("" means a default naming informerkit).
	UserAgent string
	// Timeout bounds non-watch requests, body included (0 means no limit beyond the request's
	// context and the deadlines below).
	Timeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers of every request but a
	// watch; WatchResponseHeaderTimeout the wait for a watch's answer (headers, or the
	// WebSocket handshake); ResponseBodyIdleTimeout the silence of a response body that has
	// started (not a watch stream: HTTP/2 and WebSocket pings and the reflector's stall
	// detection watch those). A deadline that passes fails the request with a *TimeoutError,
	// logged at Warn when it passes.
	// 0 means DefaultResponseHeaderTimeout, DefaultWatchResponseHeaderTimeout and
	// DefaultResponseBodyIdleTimeout; a negative value means no deadline. client-go has none
	// of the three.
	ResponseHeaderTimeout      time.Duration
	WatchResponseHeaderTimeout time.Duration
	ResponseBodyIdleTimeout    time.Duration
	// Namespace is the default namespace of the kubeconfig context or the pod ("" if none).
	Namespace string
	// WatchProtocol selects how watches are opened.
	WatchProtocol WatchProtocol
	// JSONDecoder selects the decoder of JSON responses and watch events: JSONCompiled (the
	// default) or JSONStandard (encoding/json).
	JSONDecoder JSONDecoder
	// Compression selects when responses are asked for gzip-compressed (Accept-Encoding:
	// gzip): CompressionAuto, the default, asks unless Host is a loopback address.
	// kube-apiserver then compresses bodies over 128 KiB and, from 1.37, streaming lists over
	// chunked HTTP (never WebSocket messages), so that with WatchAuto a streaming list goes
	// over chunked HTTP when gzip is asked. A kubeconfig's disable-compression: true, and
	// the in-cluster configuration (a fast link), set CompressionNone.
	Compression Compression
	// DisableProtobuf asks for JSON only. Default false: the built-in kinds that
	// internal/kubeschema describes are asked for as protobuf first, JSON second (client-go's
	// Accept header), when the Resource's Go type is a struct; custom resources,
	// Unstructured and other types are always JSON. Request bodies are JSON either way.
	DisableProtobuf bool

	// MaxRetries bounds the retries of an idempotent (GET) request on 429, 5xx and
	// connection errors: 0 means DefaultMaxRetries, a negative value disables retries.
	// Writes and watch streams are never retried.
	MaxRetries int
	// MaxEventSize is the largest watch event, in bytes, the decoder accepts before it ends
	// the watch with ErrEventTooLarge (0 means DefaultMaxEventSize).
	MaxEventSize int
	// DecodeWorkers bounds the goroutines that decode the large objects of one watch or list
	// at once (JSON objects of 16 KiB or more, protobuf ones of 64 KiB or more; smaller ones
	// are decoded by the reading goroutine), handed over in the order they came: 0 means
	// GOMAXPROCS, at most 8; 1 decodes every object on the reading goroutine. Protobuf watch
	// events of 1 MiB or more stay on the reading goroutine: measured, they gained nothing. The
	// figures that set the sizes are in bench/README.md, "Parallel decode".
	DecodeWorkers int
	// Logger receives the client's logs: a Warn line for every deadline that passes (naming
	// its setting, as the *TimeoutError does), an Info line for every fallback (WebSocket to
	// chunked watches, protobuf to JSON; once per client or resource), debug lines for
	// retries. nil means slog.Default(). Tokens are never logged.
	Logger *slog.Logger
	// Metrics, if set, observes every request's result and latency (see RequestMetrics;
	// the controller Manager sets its Registry's).
	Metrics RequestMetrics
	// Tracer, if set, starts a client span for every request, child of the span its
	// context carries (see package tracing; the controller Manager sets its own).
	Tracer tracing.Tracer
	// WrapTransport, if set, wraps the HTTP transport under authentication (for metrics,
	// tracing or tests). It does not apply to WebSocket connections.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// TLSConfig configures TLS for a Config. Verification is on unless Insecure is set.
type TLSConfig struct {
	// CAFile and CAData hold the PEM certificates that verify the server (CAData wins);
	// without either, the system roots are used.
	CAFile string
	CAData []byte
	// CertFile/CertData and KeyFile/KeyData are the PEM client certificate and key
	// (the *Data fields win).
	CertFile string
	CertData []byte
	KeyFile  string
	KeyData  []byte
	// ServerName overrides the name the server certificate is verified against (SNI).
	ServerName string
	// Insecure skips server certificate verification. Only when explicitly asked for.
	Insecure bool
}

// ExecConfig runs a credential plugin that prints a client.authentication.k8s.io/v1
// ExecCredential (token or client certificate, with an optional expirationTimestamp).
type ExecConfig struct {
	// Command is the plugin executable (resolved against the kubeconfig's directory by
	// LoadConfig when it is a relative path with a slash), run with Args.
	Command string
	Args    []string
	// Env is added to the client's environment, with KUBERNETES_EXEC_INFO.
	Env []ExecEnvVar
	// APIVersion is client.authentication.k8s.io/v1 ("" means v1) or v1beta1.
	APIVersion string
	// InteractiveMode is recorded from the kubeconfig; informerkit never runs plugins
	// interactively and refuses "Always".
	InteractiveMode string
	// ProvideClusterInfo passes the cluster (server, CA, TLS server name, proxy) to the
	// plugin in KUBERNETES_EXEC_INFO's spec.cluster.
	ProvideClusterInfo bool
	// ClusterConfig, if set, is passed to the plugin with the cluster's information
	// (ProvideClusterInfo) as KUBERNETES_EXEC_INFO's spec.cluster.config: the cluster's
	// client.authentication.k8s.io/exec extension, as a ClusterProfile's access provider
	// carries it (controller/multicluster). A JSON value. Not read from a kubeconfig.
	ClusterConfig json.RawMessage
	// Timeout bounds a run of the plugin: one that does not finish in time is killed and
	// the request fails with a *TimeoutError (Op "exec plugin"). 0 means DefaultExecTimeout;
	// a negative value means no limit. Not part of a kubeconfig.
	Timeout time.Duration
	// MaxOutput bounds the plugin's standard output in bytes: past it the plugin is killed
	// and the request fails with ErrExecOutputTooLarge. 0 means DefaultExecMaxOutput. Not
	// part of a kubeconfig.
	MaxOutput int
}

// ExecEnvVar is one environment variable for an exec credential plugin.
type ExecEnvVar struct {
	Name  string
	Value string
}

// Compression selects when the client asks for gzip-compressed responses. Whatever it asks,
// a gzip body is read one member at a time within fixed memory, and one that expands by more
// than GzipRatioLimit is refused (ErrGzipBomb).
type Compression int

const (
	// CompressionAuto, the default, asks for gzip unless the server is on a loopback address
	// (localhost, 127.0.0.0/8, ::1), where compressing costs kube-apiserver CPU and saves no
	// time, as on any link of a gigabit or more; through a 100 Mbit/s link a streaming list of
	// 5,000 pods arrives 5.4 times sooner (protobuf; 2.2 times as JSON). The figures are in
	// bench/README.md, "Compression".
	CompressionAuto Compression = iota
	// CompressionGzip always asks for gzip, as client-go does by default.
	CompressionGzip
	// CompressionNone never asks (client-go's DisableCompression).
	CompressionNone
)

// WatchProtocol selects the transport of watch streams.
type WatchProtocol int

const (
	// WatchAuto, the default, opens every watch over WebSocket, one connection per watch,
	// and falls back to chunked streams at once (remembered for the client, logged once) if
	// the server refuses the upgrade, a 200 from a proxy without WebSocket support included
	// (ErrWebSocketRefused, decided at the answer's headers). On kube-apiserver v1.36 with protobuf a WebSocket watch costs the server
	// about a third less CPU per event than a chunked stream over HTTP/2 (no HTTP/2 framing
	// or flow control), which shortens the time to sync, and the client a little less; the
	// pings of WebSocket find a dead connection. A process with hundreds of informers may
	// prefer WatchChunked, whose streams share the HTTP/2 connections (one per 100 watches),
	// as client-go's do. The figures are in bench/README.md, "Watch transport". A streaming
	// list (sendInitialEvents) goes over a chunked stream when the client asks for gzip
	// (Config.Compression), which WebSocket messages never carry ("Compression" there).
	WatchAuto WatchProtocol = iota
	// WatchChunked uses a chunked HTTP/1.1 or HTTP/2 response stream.
	WatchChunked
	// WatchWebSocket uses WebSocket only: one connection per watch; a refused upgrade is the
	// watch's error (ErrWebSocketRefused).
	WatchWebSocket
)
