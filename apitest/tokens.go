package apitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// Service account tokens, as the kube-apiserver issues them (serviceaccounts/token, a
// TokenRequest) and checks them (bearer tokens, TokenReviews): a JWT signed with a key of
// the server's own, naming the service account and its uid, valid for its audiences until
// it expires or the service account is deleted.

// DefaultServiceAccountIssuer is the issuer of service account tokens (and their default
// audience) when Options.ServiceAccountIssuer is empty: the kube-apiserver's usual
// --service-account-issuer.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// saToken is what the server knows of a token it issued.
type saToken struct {
	namespace, name, uid string
	audiences            []string
	expires              time.Time
	jti                  string
}

// tokenIssuer signs and remembers service account tokens.
type tokenIssuer struct {
	once   sync.Once
	key    *ecdsa.PrivateKey
	keyErr error
	mu     sync.Mutex
	issued map[string]saToken
}

func (ti *tokenIssuer) signer() (*ecdsa.PrivateKey, error) {
	ti.once.Do(func() { ti.key, ti.keyErr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })
	return ti.key, ti.keyErr
}

func (s *Server) issuer() string {
	if s.opts.ServiceAccountIssuer != "" {
		return s.opts.ServiceAccountIssuer
	}
	return DefaultServiceAccountIssuer
}

// createToken serves the create of serviceaccounts/<name>/token.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	req, st := readObject(r, &resource{typ: ResourceType{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"}})
	if st != nil {
		writeStatus(w, st)
		return
	}
	spec := jsonobj.Map(req["spec"])
	if spec == nil {
		spec = map[string]any{}
	}
	exp := int64(3600)
	if v, ok := spec["expirationSeconds"]; ok && v != nil {
		exp = jsonobj.Num(v)
	}
	var errs []apierr.FieldError
	switch {
	case exp < 600:
		errs = append(errs, apierr.InvalidValue("spec.expirationSeconds", exp, "may not specify a duration less than 10 minutes"))
	case exp > 1<<32:
		errs = append(errs, apierr.InvalidValue("spec.expirationSeconds", exp, "may not specify a duration larger than 2^32 seconds"))
	}
	if len(errs) > 0 {
		writeStatus(w, apierr.Invalid("TokenRequest", "authentication.k8s.io", ri.name, errs))
		return
	}
	audiences := jsonobj.Strings(spec["audiences"])
	if len(audiences) == 0 {
		audiences = []string{s.issuer()}
	}
	s.mu.Lock()
	sa := ri.res.objects[objectKey(ri.namespace, ri.name)]
	s.mu.Unlock()
	if sa == nil {
		writeStatus(w, errNotFound(&ri.res.typ, ri.name))
		return
	}
	now := time.Now().Truncate(time.Second)
	tok := saToken{namespace: ri.namespace, name: ri.name, uid: sa.uid, audiences: audiences,
		expires: now.Add(time.Duration(exp) * time.Second), jti: newUID()}
	jwt, err := s.signToken(tok, now)
	if err != nil {
		writeStatus(w, apierr.New(http.StatusInternalServerError, meta.StatusReasonInternalError, err.Error()))
		return
	}
	if !dryRun(r) {
		s.tokens.mu.Lock()
		if s.tokens.issued == nil {
			s.tokens.issued = map[string]saToken{}
		}
		s.tokens.issued[jwt] = tok
		s.tokens.mu.Unlock()
	}
	spec["audiences"] = audiences
	spec["expirationSeconds"] = exp
	if _, ok := spec["boundObjectRef"]; !ok {
		spec["boundObjectRef"] = nil
	}
	out := map[string]any{"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
		"metadata": map[string]any{"name": ri.name, "namespace": ri.namespace, "creationTimestamp": nil},
		"spec":     spec,
		"status":   map[string]any{"token": jwt, "expirationTimestamp": tok.expires.UTC().Format(time.RFC3339)}}
	writeBody(w, outputOf(w), http.StatusCreated, mustJSON(out))
}

// signToken makes the JWT of tok (ES256, the claims the kube-apiserver's tokens carry).
func (s *Server) signToken(tok saToken, now time.Time) (string, error) {
	key, err := s.tokens.signer()
	if err != nil {
		return "", err
	}
	header := map[string]any{"alg": "ES256", "kid": "apitest"}
	claims := map[string]any{
		"aud": tok.audiences, "exp": tok.expires.Unix(), "iat": now.Unix(), "nbf": now.Unix(),
		"iss": s.issuer(), "jti": tok.jti, "sub": "system:serviceaccount:" + tok.namespace + ":" + tok.name,
		"kubernetes.io": map[string]any{"namespace": tok.namespace,
			"serviceaccount": map[string]any{"name": tok.name, "uid": tok.uid}},
	}
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	signing := enc(header) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signing))
	rr, ss, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	rr.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// serviceAccountToken returns the issued token, if it is still valid for one of audiences
// (nil: the server's own, its issuer) and its service account still exists with its uid.
func (s *Server) serviceAccountToken(token string, audiences []string) (saToken, []string, error) {
	s.tokens.mu.Lock()
	tok, ok := s.tokens.issued[token]
	s.tokens.mu.Unlock()
	if !ok {
		return saToken{}, nil, fmt.Errorf("invalid bearer token")
	}
	if time.Now().After(tok.expires) {
		return saToken{}, nil, fmt.Errorf("invalid bearer token, token has expired")
	}
	if len(audiences) == 0 {
		audiences = []string{s.issuer()}
	}
	var matched []string
	for _, a := range audiences {
		if slices.Contains(tok.audiences, a) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return saToken{}, nil, fmt.Errorf("invalid bearer token, token audiences %q is invalid for the target audiences %q", tok.audiences, audiences)
	}
	sa, err := s.Get("serviceaccounts", tok.namespace, tok.name)
	if err != nil || sa.UID() != tok.uid {
		return saToken{}, nil, fmt.Errorf("invalid bearer token, service account %s/%s has been deleted", tok.namespace, tok.name)
	}
	return tok, matched, nil
}

// user is the identity a service account token authenticates as.
func (t saToken) user() UserInfo {
	return UserInfo{Name: "system:serviceaccount:" + t.namespace + ":" + t.name, UID: t.uid,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + t.namespace, "system:authenticated"},
		Extra:  map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=" + t.jti}}}
}

// serviceAccountTokenUser returns the service account a token of TokenRequest names.
func (s *Server) serviceAccountTokenUser(token string) (UserInfo, bool) {
	tok, _, err := s.serviceAccountToken(token, nil)
	if err != nil {
		return UserInfo{}, false
	}
	return tok.user(), true
}

// createTokenReview answers a TokenReview: who spec.token authenticates, for which of
// spec.audiences.
func (s *Server) createTokenReview(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	spec := jsonobj.Map(obj["spec"])
	token := jsonobj.Str(spec, "token")
	audiences := jsonobj.Strings(spec["audiences"])
	status := map[string]any{"user": map[string]any{}}
	if tok, matched, err := s.serviceAccountToken(token, audiences); err == nil {
		status = map[string]any{"authenticated": true, "user": userJSON(tok.user()), "audiences": matched}
	} else if u, ok := s.staticTokenUser(token); ok {
		status = map[string]any{"authenticated": true, "user": userJSON(u)}
		if len(audiences) > 0 {
			status["audiences"] = audiences
		}
	} else if token != "" {
		status["error"] = "[invalid bearer token, " + err.Error() + "]"
	}
	obj["status"] = status
	if obj["metadata"] == nil {
		obj["metadata"] = map[string]any{}
	}
	obj["metadata"].(map[string]any)["creationTimestamp"] = nil
	writeBody(w, outputOf(w), http.StatusCreated, mustJSON(obj))
}

// staticTokenUser is tokenUser without the service account tokens.
func (s *Server) staticTokenUser(token string) (UserInfo, bool) {
	if token == "" {
		return UserInfo{}, false
	}
	if s.opts.Token != "" && token == s.opts.Token {
		return adminUser(), true
	}
	if u, ok := s.opts.Tokens[token]; ok {
		u.Groups = append(slices.Clone(u.Groups), "system:authenticated")
		return u, true
	}
	return UserInfo{}, false
}

// userJSON is a UserInfo as reviews carry it.
func userJSON(u UserInfo) map[string]any {
	m := map[string]any{"username": u.Name, "groups": u.Groups}
	if u.UID != "" {
		m["uid"] = u.UID
	}
	if len(u.Extra) > 0 {
		m["extra"] = u.Extra
	}
	return m
}
