package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/informerkit/informerkit/apitest"
)

// kubeAPIServerFlags are the kube-apiserver flags the drop-in knows: every one envtest
// v0.25 passes (controller-runtime's pkg/internal/testing/controlplane), and the serving
// and authentication flags of a hand-written command line. --insecure-port is absent, as
// from kube-apiserver 1.24 on: envtest reads --help to decide not to pass it.
var kubeAPIServerFlags = []flagSpec{
	{name: "secure-port", help: "the port to serve HTTPS on (default 6443)"},
	{name: "bind-address", help: "the address to listen on (default 0.0.0.0)"},
	{name: "cert-dir", help: "the directory of apiserver.crt and apiserver.key (written, self-signed, if absent; default /var/run/kubernetes)"},
	{name: "tls-cert-file", help: "the serving certificate (default: apiserver.crt of --cert-dir)"},
	{name: "tls-private-key-file", help: "the key of --tls-cert-file (default: apiserver.key of --cert-dir)"},
	{name: "client-ca-file", help: "client certificates signed by these CAs authenticate as their CommonName, in the groups of their Organization"},
	{name: "token-auth-file", help: "bearer tokens: a CSV of token,user,uid,\"group1,group2\""},
	{name: "service-cluster-ip-range", help: "Service cluster IPs (apitest allocates from 10.0.0.0/24 whatever the value)"},
	{name: "etcd-servers", help: "etcd's URLs (apitest keeps its objects in this process)", ignored: true},
	{name: "advertise-address", help: "the address advertised to members of the cluster", ignored: true},
	{name: "authorization-mode", help: "authorizers: apitest allows every authenticated request (see docs/apitest.md)", ignored: true},
	{name: "allow-privileged", help: "allow privileged containers", ignored: true},
	{name: "disable-admission-plugins", help: "admission plugins to disable", ignored: true},
	{name: "enable-admission-plugins", help: "admission plugins to enable", ignored: true},
	{name: "service-account-issuer", help: "the issuer of service account tokens", ignored: true},
	{name: "service-account-key-file", help: "keys that verify service account tokens", ignored: true},
	{name: "service-account-signing-key-file", help: "the key that signs service account tokens", ignored: true},
	{name: "feature-gates", help: "feature gates", ignored: true},
	{name: "runtime-config", help: "API groups and versions to enable", ignored: true},
	{name: "v", help: "log verbosity", ignored: true},
	{name: "version", boolean: true, help: "print the version and exit"},
	{name: "help", boolean: true, help: "print this help"},
}

// apiserverVersion is what --version prints: the release whose behaviour apitest follows.
var apiserverVersion = "Kubernetes " + apitest.DefaultKubernetesVersion()

// runKubeAPIServer is the drop-in kube-apiserver: an apitest server on --bind-address and
// --secure-port with the TLS and authentication its flags describe, until a signal.
func runKubeAPIServer(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	p, err := parseFlags(args, kubeAPIServerFlags)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	if p.has("help") {
		printHelp(stdout, "kube-apiserver", "apitest as kube-apiserver: the Kubernetes API server in one process, without etcd.", kubeAPIServerFlags)
		return 0
	}
	if p.has("version") {
		fmt.Fprintln(stdout, apiserverVersion)
		return 0
	}
	for _, f := range p.unknown {
		fmt.Fprintf(stderr, "apitest kube-apiserver: ignoring flag %s (not modelled)\n", f)
	}
	opts, err := kubeAPIServerOptions(p)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	s, err := apitest.Start(opts)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	fmt.Fprintf(stderr, "apitest kube-apiserver serving %s\n", s.URL)
	<-stop
	s.Close()
	return 0
}

// kubeAPIServerOptions turns the flags into the server's options.
func kubeAPIServerOptions(p parsedFlags) (apitest.Options, error) {
	var o apitest.Options
	o.Addr = net.JoinHostPort(p.get("bind-address", "0.0.0.0"), p.get("secure-port", "6443"))
	certDir := p.get("cert-dir", "/var/run/kubernetes")
	certFile, keyFile := p.get("tls-cert-file", ""), p.get("tls-private-key-file", "")
	if (certFile == "") != (keyFile == "") {
		return o, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if certFile == "" {
		certFile, keyFile = filepath.Join(certDir, "apiserver.crt"), filepath.Join(certDir, "apiserver.key")
		if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
			host, _, _ := net.SplitHostPort(o.Addr)
			if err := writeSelfSigned(certFile, keyFile, host); err != nil {
				return o, fmt.Errorf("self-signed certificate in %s: %w", certDir, err)
			}
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return o, fmt.Errorf("serving certificate: %w", err)
	}
	o.ServingCertificate = &cert
	if f := p.get("client-ca-file", ""); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return o, fmt.Errorf("--client-ca-file: %w", err)
		}
		o.ClientCAs = x509.NewCertPool()
		if !o.ClientCAs.AppendCertsFromPEM(pem) {
			return o, fmt.Errorf("--client-ca-file %s: no PEM certificate", f)
		}
	}
	if f := p.get("token-auth-file", ""); f != "" {
		if o.Tokens, err = readTokenFile(f); err != nil {
			return o, fmt.Errorf("--token-auth-file: %w", err)
		}
	}
	return o, nil
}

// readTokenFile reads a kube-apiserver token file: token,user,uid[,"group1,group2"].
func readTokenFile(path string) (map[string]apitest.UserInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	out := map[string]apitest.UserInfo{}
	for i, rec := range recs {
		if len(rec) < 3 {
			return nil, fmt.Errorf("line %d: want token,user,uid[,groups], got %d fields", i+1, len(rec))
		}
		u := apitest.UserInfo{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			u.Groups = strings.Split(rec[3], ",")
		}
		out[rec[0]] = u
	}
	return out, nil
}
