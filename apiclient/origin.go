package apiclient

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// This file keeps credentials where they belong: never in clear text unless the
// configuration says so, never to another host than Config.Host.

// ErrCredentialsOverHTTP is returned (wrapped) by New for a Config whose Host is a plain
// http:// URL and which holds credentials (a bearer token or token file, basic
// authentication, an exec plugin), unless Config.AllowCredentialsOverHTTP is set: they would
// travel in clear text. client-go's kubeconfig loader silently drops the credentials of a
// non-TLS server; informerkit refuses the configuration, so that the mistake is seen at once
// instead of as a 401 later.
var ErrCredentialsOverHTTP = errors.New("credentials would be sent in clear text to a plain http:// server")

// RedirectError is the error of a request that the server answered with a redirect the
// client does not follow: to another scheme, host or port than Config.Host (unless
// Config.FollowCrossHostRedirects), or any redirect of a WebSocket handshake. client-go
// follows such redirects and sends its bearer token along; informerkit never sends
// credentials to another host, and by default does not follow at all, so that nothing a
// third host says reaches a cache.
type RedirectError struct {
	// Method and Path are the request's.
	Method, Path string
	// Code is the redirect's HTTP status (301, 302, 303, 307, 308).
	Code int
	// Location is where the server pointed, with any password redacted.
	Location string
}

// Error describes the refused redirect.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("apiclient: %s %s: the server redirected (%d) to %s, another host than the API server's; not followed",
		e.Method, e.Path, e.Code, e.Location)
}

// sameOrigin reports whether u has the scheme, host and port of base.
func sameOrigin(u, base *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(canonicalHost(u), canonicalHost(base))
}

// canonicalHost is u's host with the scheme's default port made explicit.
func canonicalHost(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		return net.JoinHostPort(u.Hostname(), "443")
	case "http", "ws":
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}

// checkRedirect is the http.Client's redirect policy: same-origin redirects are followed
// (at most 10), others refused with a *RedirectError unless followCrossHost. Credentials
// are added by authTransport to requests for Config.Host only, so a followed cross-host
// redirect carries none.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("apiclient: %s %s: stopped after 10 redirects", via[0].Method, via[0].URL.Path)
	}
	if sameOrigin(req.URL, c.base) || c.followCrossHost {
		return nil
	}
	code := 0
	if req.Response != nil {
		code = req.Response.StatusCode
	}
	return &RedirectError{Method: via[0].Method, Path: via[0].URL.Path, Code: code, Location: redactURL(req.URL.String())}
}

// unwrapRedirect returns the *RedirectError inside the *url.Error that http.Client.Do
// wraps a refused redirect in, so that callers see the typed error directly.
func unwrapRedirect(err error) error {
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	return err
}

// hasCredentials reports whether cfg sends credentials with its requests.
func hasCredentials(cfg *Config) bool {
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" || cfg.Exec != nil
}

// checkCredentialsTransport refuses credentials over plain HTTP unless the configuration
// allows them, and then warns once per host (loopback hosts, where nothing crosses a
// network, excepted).
func checkCredentialsTransport(cfg *Config, base *url.URL) error {
	if base.Scheme != "http" || !hasCredentials(cfg) {
		return nil
	}
	if !cfg.AllowCredentialsOverHTTP {
		return fmt.Errorf("apiclient: Config.Host %q: %w; use https, or set Config.AllowCredentialsOverHTTP to send them anyway",
			base.String(), ErrCredentialsOverHTTP)
	}
	if isLoopback(base.Hostname()) {
		return nil
	}
	if _, warned := clearTextWarned.LoadOrStore(base.Host, true); !warned {
		logger := cfg.Logger
		if logger == nil {
			logger = slog.Default()
		}
		logger.Warn("apiclient: sending credentials in clear text to a plain http:// server (Config.AllowCredentialsOverHTTP)", "host", base.Host)
	}
	return nil
}

// clearTextWarned holds the hosts already warned about.
var clearTextWarned sync.Map

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
