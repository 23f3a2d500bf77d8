package apiclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// authenticator produces the credentials of every request: a bearer token (static, from a
// file that may rotate, or from an exec plugin), basic authentication, or a client
// certificate from an exec plugin. Secrets never appear in its errors.
type authenticator struct {
	token      string
	tokenFile  *tokenFile
	username   string
	password   string
	exec       *execProvider
	onRotate   func() // closes idle connections when an exec client certificate is dropped
	staticCert *tls.Certificate
}

func newAuthenticator(cfg *Config) (*authenticator, error) {
	a := &authenticator{token: cfg.BearerToken, username: cfg.Username, password: cfg.Password}
	if cfg.BearerTokenFile != "" {
		a.tokenFile = &tokenFile{path: cfg.BearerTokenFile}
		if _, err := a.tokenFile.get(false); err != nil {
			return nil, err
		}
	}
	if cfg.Exec != nil {
		p, err := newExecProvider(cfg)
		if err != nil {
			return nil, err
		}
		a.exec = p
	}
	return a, nil
}

// credentials returns the Authorization header value ("" for none) and the bearer token
// alone (for the WebSocket subprotocol), plus a handle identifying what was used.
func (a *authenticator) credentials(ctx context.Context) (authz, bearer string, used any, err error) {
	switch {
	case a.exec != nil:
		cred, err := a.exec.get(ctx)
		if err != nil {
			return "", "", nil, err
		}
		if cred.token != "" {
			return "Bearer " + cred.token, cred.token, cred, nil
		}
		return "", "", cred, nil
	case a.tokenFile != nil:
		tok, err := a.tokenFile.get(false)
		if err != nil {
			return "", "", nil, err
		}
		return "Bearer " + tok, tok, tok, nil
	case a.token != "":
		return "Bearer " + a.token, a.token, nil, nil
	case a.username != "" || a.password != "":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(a.username+":"+a.password)), "", nil, nil
	}
	return "", "", nil, nil
}

// unauthorized is called after a 401 for credentials `used`; it reports whether fresh
// credentials are available, so the request is worth sending once more.
func (a *authenticator) unauthorized(used any) bool {
	switch {
	case a.exec != nil:
		cred, _ := used.(*execResult)
		if cred == nil {
			return false
		}
		a.exec.invalidate(cred)
		if cred.cert != nil && a.onRotate != nil {
			a.onRotate()
		}
		return true
	case a.tokenFile != nil:
		old, _ := used.(string)
		tok, err := a.tokenFile.get(true)
		return err == nil && tok != old
	}
	return false
}

// clientCertificate serves tls.Config.GetClientCertificate when an exec plugin may supply
// the certificate.
func (a *authenticator) clientCertificate(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	ctx := context.Background()
	if cri != nil {
		ctx = cri.Context()
	}
	cred, err := a.exec.get(ctx)
	if err != nil {
		return nil, err
	}
	if cred.cert != nil {
		return cred.cert, nil
	}
	if a.staticCert != nil {
		return a.staticCert, nil
	}
	return &tls.Certificate{}, nil
}

// authTransport adds User-Agent and credentials to every request for the API server's
// origin (never to another host a followed redirect leads to) and, after a 401 with
// credentials that can be refreshed (exec plugin, token file), sends the request once more.
type authTransport struct {
	base      http.RoundTripper
	auth      *authenticator
	userAgent string
	origin    *url.URL
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r2, used, err := t.prepare(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(r2)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || used == nil {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	if !t.auth.unauthorized(used) {
		return resp, nil
	}
	r3, _, err := t.prepare(req)
	if err != nil {
		return resp, nil
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return resp, nil
		}
		r3.Body = body
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return t.base.RoundTrip(r3)
}

func (t *authTransport) prepare(req *http.Request) (*http.Request, any, error) {
	r2 := req.Clone(req.Context())
	if r2.Header.Get("User-Agent") == "" {
		r2.Header.Set("User-Agent", t.userAgent)
	}
	if !sameOrigin(r2.URL, t.origin) {
		r2.Header.Del("Authorization")
		return r2, nil, nil
	}
	if r2.Header.Get("Authorization") != "" {
		return r2, nil, nil
	}
	authz, _, used, err := t.auth.credentials(req.Context())
	if err != nil {
		return nil, nil, err
	}
	if authz != "" {
		r2.Header.Set("Authorization", authz)
	}
	return r2, used, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// tokenFile caches a bearer token file and re-reads it when its modification time or size
// changes (projected service-account tokens are rotated by an atomic symlink swap), or when
// the server rejected the cached token.
type tokenFile struct {
	path  string
	mu    sync.Mutex
	token string
	mod   time.Time
	size  int64
}

func (f *tokenFile) get(force bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := os.Stat(f.path)
	if err != nil {
		if f.token != "" && !force {
			return f.token, nil // keep the last token while a rotation swaps files
		}
		return "", fmt.Errorf("apiclient: token file %q: %w", f.path, errors.Unwrap(err))
	}
	if !force && f.token != "" && fi.ModTime().Equal(f.mod) && fi.Size() == f.size {
		return f.token, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return "", fmt.Errorf("apiclient: token file %q: %w", f.path, errors.Unwrap(err))
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		if f.token != "" {
			return f.token, nil
		}
		return "", fmt.Errorf("apiclient: token file %q is empty", f.path)
	}
	f.token, f.mod, f.size = tok, fi.ModTime(), fi.Size()
	return tok, nil
}

// buildTLSConfig turns Config.TLS into a *tls.Config. Verification is on unless
// TLS.Insecure is set; combining Insecure with a CA is refused as kubectl does.
func buildTLSConfig(cfg *Config, auth *authenticator) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.TLS.ServerName}
	t := cfg.TLS
	hasCA := len(t.CAData) > 0 || t.CAFile != ""
	if t.Insecure {
		if hasCA {
			return nil, errors.New("apiclient: TLS: a CA and Insecure (skip verification) are mutually exclusive")
		}
		tc.InsecureSkipVerify = true
	}
	if hasCA {
		pem := t.CAData
		src := "CA data"
		if len(pem) == 0 {
			var err error
			if pem, err = os.ReadFile(t.CAFile); err != nil {
				return nil, fmt.Errorf("apiclient: TLS CA file %q: %w", t.CAFile, errors.Unwrap(err))
			}
			src = fmt.Sprintf("CA file %q", t.CAFile)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("apiclient: TLS %s: no PEM certificate found", src)
		}
		tc.RootCAs = pool
	}
	certPEM, keyPEM := t.CertData, t.KeyData
	if len(certPEM) == 0 && t.CertFile != "" {
		var err error
		if certPEM, err = os.ReadFile(t.CertFile); err != nil {
			return nil, fmt.Errorf("apiclient: TLS client certificate %q: %w", t.CertFile, errors.Unwrap(err))
		}
	}
	if len(keyPEM) == 0 && t.KeyFile != "" {
		var err error
		if keyPEM, err = os.ReadFile(t.KeyFile); err != nil {
			return nil, fmt.Errorf("apiclient: TLS client key %q: %w", t.KeyFile, errors.Unwrap(err))
		}
	}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("apiclient: TLS client certificate and key: %w", err)
		}
		auth.staticCert = &cert
		tc.Certificates = []tls.Certificate{cert}
	case len(certPEM) > 0:
		return nil, errors.New("apiclient: TLS: a client certificate without a key")
	case len(keyPEM) > 0:
		return nil, errors.New("apiclient: TLS: a client key without a certificate")
	}
	if auth.exec != nil {
		tc.GetClientCertificate = auth.clientCertificate
	}
	return tc, nil
}
