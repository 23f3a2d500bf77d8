package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reading test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// background runs the program as name with args until the test ends, and returns its
// output and the channel of its exit code.
func background(t *testing.T, name string, args ...string) (stdout, stderr *syncBuffer, code <-chan int) {
	t.Helper()
	stop := make(chan os.Signal, 1)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(name, args, stdout, stderr, stop) }()
	t.Cleanup(func() {
		stop <- os.Interrupt
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return stdout, stderr, done
}

// waitFor polls ok until it holds (the servers start in the background).
func waitFor(t *testing.T, what string, done <-chan int, stderr *syncBuffer, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		select {
		case c := <-done:
			t.Fatalf("exited with %d before %s:\n%s", c, what, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30s:\n%s", what, stderr)
		}
		time.Sleep(10 * time.Millisecond) // polling a port another goroutine opens
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// TestHelpListsEnvtestFlags: envtest reads --help to decide which flags to pass:
// --insecure-port must be absent (kube-apiserver 1.24+), --unsafe-no-fsync present for etcd.
func TestHelpListsEnvtestFlags(t *testing.T) {
	var out bytes.Buffer
	if code := run("kube-apiserver", []string{"--help"}, &out, io.Discard, nil); code != 0 {
		t.Fatalf("kube-apiserver --help exited %d", code)
	}
	for _, f := range []string{"secure-port", "cert-dir", "client-ca-file", "service-account-signing-key-file", "authorization-mode"} {
		if !regexp.MustCompile(`(?m)^\s*--` + f + `\b`).Match(out.Bytes()) {
			t.Errorf("--help lacks --%s", f)
		}
	}
	if regexp.MustCompile(`(?m)^\s*--insecure-port\b`).Match(out.Bytes()) {
		t.Error("--help lists --insecure-port: envtest would pass it")
	}
	out.Reset()
	if code := run("etcd", []string{"--help"}, &out, io.Discard, nil); code != 0 || !regexp.MustCompile(`(?m)^\s*--unsafe-no-fsync\b`).Match(out.Bytes()) {
		t.Errorf("etcd --help: exit %d, output %q", code, out.String())
	}
	out.Reset()
	if run("kube-apiserver", []string{"--version"}, &out, io.Discard, nil) != 0 || !strings.HasPrefix(out.String(), "Kubernetes v1.") {
		t.Errorf("kube-apiserver --version: %q", out.String())
	}
}

func TestParseFlags(t *testing.T) {
	p, err := parseFlags([]string{"--secure-port=6443", "--cert-dir", "/x", "--unknown=1", "--other", "v", "--lonely", "--help"}, kubeAPIServerFlags)
	if err != nil {
		t.Fatal(err)
	}
	if p.get("secure-port", "") != "6443" || p.get("cert-dir", "") != "/x" || !p.has("help") {
		t.Errorf("values %v", p.values)
	}
	if strings.Join(p.unknown, " ") != "--unknown --other --lonely" || p.get("other", "") != "v" || p.get("lonely", "") != "true" {
		t.Errorf("unknown %v, values %v", p.unknown, p.values)
	}
	if _, err := parseFlags([]string{"--cert-dir"}, kubeAPIServerFlags); err == nil {
		t.Error("a known flag without its value parsed")
	}
	if _, err := parseFlags([]string{"stray"}, kubeAPIServerFlags); err == nil {
		t.Error("a positional argument parsed")
	}
}

// TestEtcdStub answers /health on every client URL until stopped.
func TestEtcdStub(t *testing.T) {
	a, b := freePort(t), freePort(t)
	_, stderr, done := background(t, "etcd", "--listen-client-urls=http://127.0.0.1:"+a+",http://127.0.0.1:"+b,
		"--data-dir="+t.TempDir(), "--unsafe-no-fsync=true", "--listen-peer-urls=http://127.0.0.1:0")
	for _, port := range []string{a, b} {
		var body string
		waitFor(t, "/health on "+port, done, stderr, func() bool {
			resp, err := http.Get("http://127.0.0.1:" + port + "/health")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			bb, _ := io.ReadAll(resp.Body)
			body = string(bb)
			return resp.StatusCode == 200
		})
		if !strings.Contains(body, `"health":"true"`) {
			t.Errorf("/health: %s", body)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestServe writes a kubeconfig that reaches the server, installs the CRDs of a
// directory (skipping files that hold none) and starts the simulated nodes.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	crds := filepath.Join(dir, "crds")
	os.Mkdir(crds, 0o755)
	os.WriteFile(filepath.Join(crds, "widgets.yaml"), []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`), 0o644)
	os.WriteFile(filepath.Join(crds, "notes.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	os.WriteFile(filepath.Join(crds, "README.md"), []byte("not yaml: ["), 0o644)
	kc := filepath.Join(dir, "kubeconfig")
	stdout, stderr, done := background(t, "apitest", "serve", "-kubeconfig", kc, "-crds", crds, "-nodes", "2")
	waitFor(t, "the ready line", done, stderr, func() bool { return strings.Contains(stdout.String(), "export KUBECONFIG="+kc) })
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken == "" || len(cfg.TLS.CAData) == 0 {
		t.Errorf("kubeconfig without token or CA: %+v", cfg)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type obj struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	ctx := t.Context()
	nodes, err := apiclient.NewResource[*obj](c, meta.GroupVersionResource{Version: "v1", Resource: "nodes"}).List(ctx, apiclient.ListOptions{})
	if err != nil || len(nodes.Items) != 2 {
		t.Errorf("nodes: %v, %v; want 2", nodes, err)
	}
	widgets := apiclient.NewResource[*obj](c, meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	if _, err := widgets.Create(ctx, &obj{TypeMeta: meta.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, ObjectMeta: meta.ObjectMeta{Name: "w"}}, apiclient.CreateOptions{}); err != nil {
		t.Errorf("create a widget: %v", err)
	}
}

// TestKubeAPIServerDropIn: run as kube-apiserver with envtest's flags, the server serves
// TLS with the certificate of --cert-dir, answers /healthz unauthenticated, and
// authenticates client certificates signed by --client-ca-file as their subject.
func TestKubeAPIServerDropIn(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := makeCA(t)
	writePEM(t, filepath.Join(dir, "client-cert-auth-ca.crt"), "CERTIFICATE", ca.Raw)
	port := freePort(t)
	args := []string{"--advertise-address=127.0.0.1", "--etcd-servers=http://127.0.0.1:1", "--cert-dir=" + dir,
		"--secure-port=" + port, "--bind-address=127.0.0.1", "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
		"--disable-admission-plugins=ServiceAccount", "--authorization-mode=RBAC",
		"--service-account-issuer=https://127.0.0.1:" + port + "/", "--service-account-key-file=" + filepath.Join(dir, "sa-signer.crt"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa-signer.key"),
		"--client-ca-file=" + filepath.Join(dir, "client-cert-auth-ca.crt"), "--feature-gates=SomeGate=true", "--v=3", "--audit-log-path=/dev/null"}
	_, stderr, done := background(t, "kube-apiserver", args...)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer insecure.CloseIdleConnections()
	base := "https://127.0.0.1:" + port
	waitFor(t, "/healthz", done, stderr, func() bool {
		resp, err := insecure.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !strings.Contains(stderr.String(), "ignoring flag --audit-log-path") || strings.Contains(stderr.String(), "--feature-gates") {
		t.Errorf("stderr should name the unknown flag (only): %s", stderr)
	}
	// The serving certificate is the self-signed one written into --cert-dir.
	servingPEM, err := os.ReadFile(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(servingPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots,
		Certificates: []tls.Certificate{clientCert(t, ca, caKey, "admin", "system:masters")}}}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(base+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var review struct {
		Status struct {
			UserInfo struct {
				Username string
				Groups   []string
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&review)
	if resp.StatusCode != 201 || review.Status.UserInfo.Username != "admin" || review.Status.UserInfo.Groups[0] != "system:masters" {
		t.Errorf("SelfSubjectReview: %s %+v", resp.Status, review)
	}
	resp, err = insecure.Get(base + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no client certificate: %s, want 401", resp.Status)
	}
}

func makeCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

func clientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, orgs ...string) tls.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: orgs}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInstall puts kube-apiserver and etcd in a directory, both running this program.
func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	var out bytes.Buffer
	if code := run("apitest", []string{"install", dir}, &out, &out, nil); code != 0 {
		t.Fatalf("install: %d %s", code, out.String())
	}
	self, _ := os.Executable()
	st, _ := os.Stat(self)
	for _, name := range []string{"apitest", "kube-apiserver", "etcd"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() != st.Size() || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v %v", name, fi, err)
		}
	}
	if !strings.Contains(out.String(), "export KUBEBUILDER_ASSETS="+dir) {
		t.Errorf("output %q", out.String())
	}
	// A second install over the first works (an upgrade).
	if code := run("apitest", []string{"install", dir}, &out, &out, nil); code != 0 {
		t.Fatalf("second install: %d %s", code, out.String())
	}
}
