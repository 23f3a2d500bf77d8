package apitest_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// testCA is a CA that signs serving and client certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue signs a certificate: a serving one for loopback, or a client one for cn in orgs.
func (ca *testCA) issue(t *testing.T, serving bool, cn string, orgs ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if serving {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// call makes one request and returns the status code and the decoded JSON body.
func call(t *testing.T, c *http.Client, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	resp, out := callWithToken(t, c, method, url, token, body)
	return resp.StatusCode, out
}

// callResp makes one request without a token and returns the response (its body read) and
// the decoded JSON body.
func callResp(t *testing.T, c *http.Client, method, url string, body any) (*http.Response, map[string]any) {
	t.Helper()
	return callWithToken(t, c, method, url, "", body)
}

func callWithToken(t *testing.T, c *http.Client, method, url, token string, body any) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{"raw": string(b)}
	}
	return resp, out
}

func clientWith(ca *testCA, certs ...tls.Certificate) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool, Certificates: certs}}}
}

func str(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	return v
}

// TestClientCertificateAuthentication: with ClientCAs, a certificate signed by them is its
// subject's user (CommonName) in its groups (Organization); one signed by another CA, or
// none, is 401 except on the public paths; the serving certificate is the one given.
func TestClientCertificateAuthentication(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	serving := ca.issue(t, true, "server")
	s, err := apitest.Start(apitest.Options{ServingCertificate: &serving, ClientCAs: ca.pool})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "https://") || s.CAPEM() != nil {
		t.Fatalf("URL %s, CAPEM %d bytes: want https and no CA of its own", s.URL, len(s.CAPEM()))
	}
	admin := clientWith(ca, ca.issue(t, false, "admin", "system:masters"))
	alice := clientWith(ca, ca.issue(t, false, "alice", "devs"))
	stranger := clientWith(ca, other.issue(t, false, "mallory", "system:masters"))
	anonymous := clientWith(ca)
	for _, c := range []*http.Client{admin, alice, stranger, anonymous} {
		defer c.CloseIdleConnections()
	}

	review := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	code, out := call(t, alice, "POST", s.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "", review)
	if code != 201 || str(out, "status", "userInfo", "username") != "alice" {
		t.Fatalf("SelfSubjectReview as alice: %d %v", code, out)
	}
	if g, _ := str(out, "status", "userInfo", "groups").([]any); len(g) != 2 || g[0] != "devs" || g[1] != "system:authenticated" {
		t.Errorf("alice's groups %v, want [devs system:authenticated]", g)
	}
	if code, out := call(t, admin, "GET", s.URL+"/api/v1/namespaces", "", nil); code != 200 {
		t.Errorf("admin lists namespaces: %d %v", code, out)
	}
	for name, c := range map[string]*http.Client{"another CA's certificate": stranger, "no certificate": anonymous} {
		if code, out := call(t, c, "GET", s.URL+"/api/v1/namespaces", "", nil); code != 401 {
			t.Errorf("%s: %d %v, want 401", name, code, out)
		}
		if code, _ := call(t, c, "GET", s.URL+"/healthz", "", nil); code != 200 && name == "no certificate" {
			t.Errorf("%s: /healthz %d, want 200 (public)", name, code)
		}
	}
	// alice has no role: RBAC refuses her the namespaces, with the kube-apiserver's message.
	code, out = call(t, alice, "GET", s.URL+"/api/v1/namespaces", "", nil)
	if want := `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`; code != 403 || out["message"] != want {
		t.Errorf("alice lists namespaces: %d %v, want 403 %q", code, out["message"], want)
	}
	if code, _ := call(t, alice, "GET", s.URL+"/apis", "", nil); code != 200 {
		t.Errorf("alice's discovery: %d, want 200 (system:discovery)", code)
	}
}

// TestServiceAccountTokens: serviceaccounts/token issues a JWT; a TokenReview and a
// request with it authenticate as the service account, whose permissions are what its
// bindings grant; deleting the service account ends the token.
func TestServiceAccountTokens(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "admin-token"})
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	bare := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.CertPool()}}}
	defer bare.CloseIdleConnections()
	u := s.URL
	if code, out := call(t, c, "POST", u+"/api/v1/namespaces/default/serviceaccounts", "", map[string]any{"metadata": map[string]any{"name": "robot"}}); code != 201 {
		t.Fatalf("create serviceaccount: %d %v", code, out)
	}
	tokenURL := u + "/api/v1/namespaces/default/serviceaccounts/robot/token"
	if code, out := call(t, c, "POST", tokenURL, "", map[string]any{"spec": map[string]any{"expirationSeconds": 599}}); code != 422 ||
		!strings.Contains(out["message"].(string), "may not specify a duration less than 10 minutes") {
		t.Errorf("599 s token: %d %v, want 422", code, out["message"])
	}
	if code, _ := call(t, c, "POST", u+"/api/v1/namespaces/default/serviceaccounts/ghost/token", "", map[string]any{}); code != 404 {
		t.Errorf("token of a missing serviceaccount: %d, want 404", code)
	}
	code, out := call(t, c, "POST", tokenURL, "", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": map[string]any{"expirationSeconds": 7200}})
	token, _ := str(out, "status", "token").(string)
	if code != 201 || strings.Count(token, ".") != 2 || str(out, "spec", "audiences").([]any)[0] != apitest.DefaultServiceAccountIssuer {
		t.Fatalf("TokenRequest: %d %v", code, out)
	}
	exp, err := time.Parse(time.RFC3339, str(out, "status", "expirationTimestamp").(string))
	if err != nil || exp.Sub(time.Now()) < 7100*time.Second || exp.Sub(time.Now()) > 7300*time.Second {
		t.Errorf("expirationTimestamp %v (%v), want two hours from now", exp, err)
	}

	code, out = call(t, c, "POST", u+"/apis/authentication.k8s.io/v1/tokenreviews", "", map[string]any{"spec": map[string]any{"token": token}})
	if code != 201 || str(out, "status", "authenticated") != true || str(out, "status", "user", "username") != "system:serviceaccount:default:robot" {
		t.Fatalf("TokenReview: %d %v", code, out)
	}
	if _, out := call(t, c, "POST", u+"/apis/authentication.k8s.io/v1/tokenreviews", "", map[string]any{"spec": map[string]any{"token": token, "audiences": []string{"elsewhere"}}}); str(out, "status", "authenticated") == true {
		t.Errorf("TokenReview for another audience authenticated: %v", out)
	}
	if _, out := call(t, c, "POST", u+"/apis/authentication.k8s.io/v1/tokenreviews", "", map[string]any{"spec": map[string]any{"token": "nonsense"}}); str(out, "status", "authenticated") == true || str(out, "status", "error") == nil {
		t.Errorf("TokenReview of nonsense: %v, want unauthenticated with an error", out)
	}

	podsURL := u + "/api/v1/namespaces/default/pods"
	if code, out := call(t, bare, "GET", podsURL, token, nil); code != 403 ||
		out["message"] != `pods is forbidden: User "system:serviceaccount:default:robot" cannot list resource "pods" in API group "" in the namespace "default"` {
		t.Errorf("robot lists pods before a binding: %d %v", code, out["message"])
	}
	rbacURL := u + "/apis/rbac.authorization.k8s.io/v1/"
	call(t, c, "POST", rbacURL+"namespaces/default/roles", "", map[string]any{"metadata": map[string]any{"name": "pods"},
		"rules": []any{map[string]any{"verbs": []string{"list"}, "apiGroups": []string{""}, "resources": []string{"pods"}}}})
	if code, out := call(t, c, "POST", rbacURL+"namespaces/default/rolebindings", "", map[string]any{"metadata": map[string]any{"name": "pods"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}}}); code != 201 {
		t.Fatalf("rolebinding: %d %v", code, out)
	}
	if code, out := call(t, bare, "GET", podsURL, token, nil); code != 200 {
		t.Errorf("robot lists pods with its binding: %d %v", code, out)
	}
	if code, _ := call(t, bare, "GET", u+"/api/v1/namespaces/kube-system/pods", token, nil); code != 403 {
		t.Errorf("robot lists kube-system's pods: %d, want 403 (a Role of default)", code)
	}

	if code, out := call(t, c, "DELETE", u+"/api/v1/namespaces/default/serviceaccounts/robot", "", nil); code != 200 {
		t.Fatalf("delete serviceaccount: %d %v", code, out)
	}
	if code, _ := call(t, bare, "GET", podsURL, token, nil); code != 401 {
		t.Errorf("the token of a deleted serviceaccount: %d, want 401", code)
	}
}

// TestSubjectAccessReview: SubjectAccessReviews and LocalSubjectAccessReviews decide from
// the stored RBAC objects, for non-resource paths too, with the authorizer's reason.
func TestSubjectAccessReview(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	c := s.Client()
	defer c.CloseIdleConnections()
	u := s.URL + "/apis/rbac.authorization.k8s.io/v1/"
	call(t, c, "POST", u+"clusterroles", "", map[string]any{"metadata": map[string]any{"name": "metrics"},
		"rules": []any{map[string]any{"verbs": []string{"get"}, "nonResourceURLs": []string{"/metrics"}}}})
	call(t, c, "POST", u+"clusterrolebindings", "", map[string]any{"metadata": map[string]any{"name": "metrics"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "prom", "namespace": "mon"}}})
	sar := func(spec map[string]any) (int, map[string]any) {
		return call(t, c, "POST", s.URL+"/apis/authorization.k8s.io/v1/subjectaccessreviews", "",
			map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
	}
	prom := "system:serviceaccount:mon:prom"
	code, out := sar(map[string]any{"user": prom, "nonResourceAttributes": map[string]any{"path": "/metrics", "verb": "get"}})
	if code != 201 || str(out, "status", "allowed") != true ||
		str(out, "status", "reason") != `RBAC: allowed by ClusterRoleBinding "metrics" of ClusterRole "metrics" to ServiceAccount "prom/mon"` {
		t.Errorf("prom may get /metrics: %d %v", code, out["status"])
	}
	if _, out := sar(map[string]any{"user": prom, "nonResourceAttributes": map[string]any{"path": "/debug", "verb": "get"}}); str(out, "status", "allowed") != false {
		t.Errorf("prom may get /debug: %v", out["status"])
	}
	if _, out := sar(map[string]any{"user": "x", "groups": []string{"system:masters"}, "resourceAttributes": map[string]any{"verb": "delete", "resource": "nodes"}}); str(out, "status", "allowed") != true {
		t.Errorf("system:masters may not delete nodes: %v", out["status"])
	}
	if code, _ := sar(map[string]any{"resourceAttributes": map[string]any{"verb": "get", "resource": "pods"}}); code != 422 {
		t.Errorf("a review without user or groups: %d, want 422", code)
	}
	code, out = call(t, c, "POST", s.URL+"/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews", "",
		map[string]any{"spec": map[string]any{"user": prom, "resourceAttributes": map[string]any{"namespace": "other", "verb": "get", "resource": "pods"}}})
	if code != 422 {
		t.Errorf("a local review of another namespace: %d %v, want 422", code, out)
	}
}
