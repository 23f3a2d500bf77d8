package apitest

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
)

// Authentication, as the kube-apiserver's union of authenticators: a client certificate
// signed by Options.ClientCAs, else a bearer token (Options.Token, Options.Tokens, or one a
// TokenRequest issued). A server with none of these configured authenticates every request
// as User in system:masters, as before authentication existed here.

// UserInfo is an authenticated user: the name, uid and groups the kube-apiserver's
// authenticators give a request (a TokenReview's status.user, a SelfSubjectReview's).
type UserInfo struct {
	Name   string
	UID    string
	Groups []string
	// Extra is the authenticator's extra information (a service account token's
	// authentication.kubernetes.io/credential-id).
	Extra map[string][]string
}

// adminUser is the user of Options.Token and of a server without authentication.
func adminUser() UserInfo {
	return UserInfo{Name: User, Groups: []string{"system:masters", "system:authenticated"}}
}

// userKey is the context key of a request's UserInfo (set by serveHTTP).
type userKey struct{}

// withUser returns r with its authenticated user in its context.
func withUser(r *http.Request, u UserInfo) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), userKey{}, u))
}

// requestUser returns the authenticated user of a request (adminUser if none was set).
func requestUser(r *http.Request) UserInfo {
	if u, ok := r.Context().Value(userKey{}).(UserInfo); ok {
		return u
	}
	return adminUser()
}

// authRequired reports whether requests must authenticate.
func (s *Server) authRequired() bool {
	return s.opts.Token != "" || len(s.opts.Tokens) > 0 || s.opts.ClientCAs != nil
}

// publicPath reports whether path is one the kube-apiserver's bootstrap role
// system:public-info-viewer grants to everyone, authenticated or not.
func publicPath(path string) bool {
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// authenticate returns the user of r, or false if r does not authenticate on a server that
// requires it. Unauthenticated requests for the public paths pass as system:anonymous.
func (s *Server) authenticate(r *http.Request) (UserInfo, bool) {
	if !s.authRequired() {
		return adminUser(), true
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && s.opts.ClientCAs != nil {
		leaf := r.TLS.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: s.opts.ClientCAs, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if err != nil || leaf.Subject.CommonName == "" {
			return UserInfo{}, false
		}
		groups := append(slices.Clone(leaf.Subject.Organization), "system:authenticated")
		return UserInfo{Name: leaf.Subject.CommonName, Groups: groups}, true
	}
	token, present := bearerToken(r)
	if present {
		if u, ok := s.tokenUser(token); ok {
			return u, true
		}
		return UserInfo{}, false
	}
	if publicPath(r.URL.Path) {
		return UserInfo{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}, true
	}
	return UserInfo{}, false
}

// tokenUser returns the user a bearer token authenticates.
func (s *Server) tokenUser(token string) (UserInfo, bool) {
	if token == "" {
		return UserInfo{}, false
	}
	if u, ok := s.staticTokenUser(token); ok {
		return u, true
	}
	return s.serviceAccountTokenUser(token)
}

// bearerToken returns the request's bearer token: its Authorization header or, on a
// WebSocket, as the kube-apiserver, a base64url subprotocol next to at least one other
// subprotocol (the one the server echoes). present is true if the request carried one,
// even a malformed one ("" then).
func bearerToken(r *http.Request) (token string, present bool) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		t, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			return "", true
		}
		return strings.TrimSpace(t), true
	}
	if !isWebSocket(r) {
		return "", false
	}
	tokens, others := 0, 0
	for _, p := range websocketProtocols(r) {
		if enc, ok := strings.CutPrefix(p, "base64url.bearer.authorization.k8s.io."); ok {
			tokens++
			dec, err := base64.RawURLEncoding.DecodeString(enc)
			if err != nil {
				return "", true
			}
			token = string(dec)
			continue
		}
		others++
	}
	if tokens == 0 {
		return "", false
	}
	if tokens != 1 || others == 0 {
		return "", true
	}
	return token, true
}
