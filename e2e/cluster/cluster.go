// Package cluster starts a real etcd v3.6.8 and kube-apiserver v1.36.3 on free loopback ports
// for informerkit's end-to-end tests, and stops them again.
//
// The binaries are built from the Go module proxy by e2e/tools (`make e2e-build` at the
// repository root) into the repository's bin/. Start generates a CA, a serving certificate
// and a service-account key, writes a static token file with one system:masters user,
// starts etcd and kube-apiserver with TLS, waits for /readyz, and writes a kubeconfig.
// A test reaches the cluster through [Cluster.KubeconfigPath] (kubectl, or
// apiclient.LoadConfig), the fields URL, CAPEM and Token (an apiclient.Config built
// directly), or [Cluster.HTTPClient] (plain net/http).
//
// The package does not import informerkit's own packages, so the harness keeps working while
// they change.
//
// Test packages use [Main] in their TestMain and [ForTest] in each test.
package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNoBinaries is returned (wrapped) by Start when kube-apiserver or etcd has not been built.
var ErrNoBinaries = errors.New("kube-apiserver and etcd binaries not found (run `make e2e-build` at the repository root)")

// UncachedResource is the one built-in resource that kube-apiserver serves without its watch
// cache (--watch-cache-sizes=podtemplates#0), straight from etcd.
//
// Every other resource goes through the watch cache, as in production. The watch cache keeps
// its own event window and does not look at etcd compaction, so a watch from a compacted
// resourceVersion of, say, configmaps still succeeds while that version is in the window
// (at least 75 seconds). A watch of podtemplates from a resourceVersion that
// [Cluster.Compact] removed fails at once with 410 Expired: use it to test 410 handling.
// Bookmarks are only sent by the watch cache, so podtemplate watches carry none (except the
// initial-events-end bookmark of a sendInitialEvents watch).
const UncachedResource = "podtemplates"

// AdminUser and AdminGroup name the identity of [Cluster.Token].
const (
	AdminUser  = "e2e-admin"
	AdminGroup = "system:masters"
)

// Options configure Start. The zero value is ready to use.
type Options struct {
	// BinDir holds the kube-apiserver and etcd binaries. Default: $E2E_BIN_DIR, else the
	// bin/ directory of the nearest ancestor of the working directory that has
	// bin/kube-apiserver (the repository root's bin/ for tests run inside e2e/).
	BinDir string
	// WorkDir receives certificates, the kubeconfig, the etcd data and the logs. Default: a
	// new directory under os.TempDir(); it is removed by [Cluster.Cleanup].
	WorkDir string
	// StartTimeout bounds the start of each process until it is ready. Default 3 minutes
	// (the machines are shared; kube-apiserver usually needs 5-20 seconds).
	StartTimeout time.Duration
	// ExtraAPIServerArgs are appended to kube-apiserver's flags (a later flag wins).
	ExtraAPIServerArgs []string
	// ExtraEtcdArgs are appended to etcd's flags.
	ExtraEtcdArgs []string
}

// Cluster is a running etcd and kube-apiserver. Its fields are set by Start and must not be
// changed. Methods are safe for concurrent use, but RestartAPIServer and Stop disturb every
// test that uses the cluster at the same time.
type Cluster struct {
	// URL is kube-apiserver's base URL, https://127.0.0.1:<port>. It survives RestartAPIServer.
	URL string
	// CAPEM is the PEM certificate of the CA that signed the serving certificate.
	CAPEM []byte
	// Token is a static bearer token of user AdminUser in group AdminGroup (system:masters).
	Token string
	// KubeconfigPath is a kubeconfig with one context ("e2e", namespace default) holding
	// URL, certificate-authority-data and the token; it works with kubectl and
	// apiclient.LoadConfig.
	KubeconfigPath string
	// EtcdEndpoint is etcd's client URL, http://127.0.0.1:<port> (no TLS). Its gRPC gateway
	// answers JSON at /v3/...; [Cluster.Compact] uses it.
	EtcdEndpoint string
	// WorkDir holds everything the cluster wrote: certificates, tokens.csv, kubeconfig,
	// etcd-data/, and the logs.
	WorkDir string
	// APIServerLog and EtcdLog are the processes' log files (every start appends to them).
	APIServerLog, EtcdLog string
	// Version is the kube-apiserver release of the binaries ("v1.36.3"), from the stamp
	// (.e2e-versions) the build wrote beside them; "" without a stamp.
	Version string

	ownWorkDir    bool
	startTimeout  time.Duration
	apiserverBin  string
	apiserverArgs []string
	client        *http.Client // trusts CAPEM, sends Token
	etcdClient    *http.Client
	// compactMu orders Compact calls of parallel tests: two interleaved ones would compact
	// the later revision first and the earlier one would then fail as already compacted.
	compactMu sync.Mutex

	mu        sync.Mutex // serialises lifecycle changes
	spawner   *spawner
	etcd      *process
	apiserver *process
	stopped   bool
}

// Start starts etcd and kube-apiserver and returns once kube-apiserver's /readyz passes and
// the default namespace exists. On error nothing is left running; the error includes the
// tail of the failing process's log. ctx bounds the start only.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	binDir, err := findBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	c = &Cluster{WorkDir: opts.WorkDir, startTimeout: opts.StartTimeout, Version: stampedVersion(binDir)}
	if c.WorkDir == "" {
		c.WorkDir = os.Getenv("E2E_WORK_DIR")
	}
	if c.WorkDir == "" {
		if c.WorkDir, err = os.MkdirTemp("", "informerkit-e2e-"); err != nil {
			return nil, err
		}
		c.ownWorkDir = true
	} else if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
		return nil, err
	}
	c.APIServerLog = filepath.Join(c.WorkDir, "kube-apiserver.log")
	c.EtcdLog = filepath.Join(c.WorkDir, "etcd.log")

	keys, err := newPKI(time.Now())
	if err != nil {
		return nil, fmt.Errorf("generate certificates: %w", err)
	}
	c.CAPEM = keys.caCert
	c.Token = keys.adminToken
	files := map[string][]byte{
		"ca.crt":        keys.caCert,
		"apiserver.crt": keys.servingCert,
		"apiserver.key": keys.servingKey,
		"sa.key":        keys.saPrivateKey,
		"sa.pub":        keys.saPublicKey,
		"tokens.csv":    fmt.Appendf(nil, "%s,%s,%s,\"%s\"\n", keys.adminToken, AdminUser, AdminUser, AdminGroup),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.WorkDir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAPEM)
	c.client = &http.Client{Transport: &bearerTransport{token: c.Token, base: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}}}
	c.etcdClient = &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}

	c.spawner = newSpawner()
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	if err := c.startEtcd(ctx, filepath.Join(binDir, "etcd"), opts.ExtraEtcdArgs); err != nil {
		return nil, err
	}
	c.apiserverBin = filepath.Join(binDir, "kube-apiserver")
	if err := c.startAPIServerFirst(ctx, opts.ExtraAPIServerArgs); err != nil {
		return nil, err
	}
	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	return c, nil
}

// stampedVersion returns the k8s.io/kubernetes version of the stamp e2e/tools/build.sh wrote
// in dir ("" if there is none).
func stampedVersion(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ".e2e-versions"))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			return f[1]
		}
	}
	return ""
}

// Minor returns the minor release of Version (36 for v1.36.3), 0 if it is unknown: tests of
// what a release changed ask for it.
func (c *Cluster) Minor() int {
	parts := strings.Split(strings.TrimPrefix(c.Version, "v"), ".")
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

func findBinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("E2E_BIN_DIR")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "bin", "kube-apiserver")); err == nil {
				dir = filepath.Join(d, "bin")
				break
			}
			if filepath.Dir(d) == d {
				return "", fmt.Errorf("%w: no bin/kube-apiserver in %s or its parents; set E2E_BIN_DIR", ErrNoBinaries, wd)
			}
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.IsDir() {
			return "", fmt.Errorf("%w: %s missing in %s", ErrNoBinaries, name, dir)
		}
	}
	return filepath.Abs(dir)
}

// freePorts returns n distinct loopback ports that were free a moment ago. Another program
// can take one before we bind it; callers retry on "address already in use".
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

const portAttempts = 3

func (c *Cluster) startEtcd(ctx context.Context, bin string, extra []string) error {
	var lastErr error
	for range portAttempts {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		args := []string{
			"--name=e2e",
			"--data-dir=" + filepath.Join(c.WorkDir, "etcd-data"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=e2e=" + peer,
			"--initial-cluster-state=new",
			"--log-level=warn",
			// Test data need not survive a power cut; fsync would make every write wait
			// for a disk that other developers share.
			"--unsafe-no-fsync=true",
			// Progress notifications every 5s (default 10m), as Kubernetes' own test clusters
			// run etcd: the watch cache then follows etcd's revision even when its resource
			// does not change, so each periodic bookmark (about once a minute per watch, best
			// effort) carries a newer resourceVersion than the watch has seen and is sent.
			"--watch-progress-notify-interval=5s",
		}
		args = append(args, extra...)
		p, err := startProcess(c.spawner, "etcd", bin, args, c.EtcdLog)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.etcd = p
		c.mu.Unlock()
		c.EtcdEndpoint = client
		lastErr = c.waitReady(ctx, p, func(ctx context.Context) error {
			return c.etcdHealthy(ctx)
		})
		if lastErr == nil {
			return nil
		}
		_ = p.stop(5 * time.Second)
		if !strings.Contains(tail(c.EtcdLog, 30), "address already in use") {
			break
		}
		// Start afresh: etcd refuses a data dir whose member has other peer URLs.
		os.RemoveAll(filepath.Join(c.WorkDir, "etcd-data"))
	}
	return fmt.Errorf("start etcd: %w\n--- %s (tail)\n%s", lastErr, c.EtcdLog, tail(c.EtcdLog, 40))
}

func (c *Cluster) etcdHealthy(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.EtcdEndpoint+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.etcdClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var h struct {
		Health string `json:"health"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Health != "true" {
		return fmt.Errorf("etcd /health: %s %s", resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// apiserverFlags returns kube-apiserver's command line for the given secure port.
func (c *Cluster) apiserverFlags(port int, extra []string) []string {
	w := func(name string) string { return filepath.Join(c.WorkDir, name) }
	args := []string{
		"--etcd-servers=" + c.EtcdEndpoint,
		// Tests compact etcd themselves (Cluster.Compact); no compaction behind their back.
		"--etcd-compaction-interval=0",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + w("apiserver-certs"),
		"--tls-cert-file=" + w("apiserver.crt"),
		"--tls-private-key-file=" + w("apiserver.key"),
		"--client-ca-file=" + w("ca.crt"),
		"--token-auth-file=" + w("tokens.csv"),
		"--service-account-key-file=" + w("sa.pub"),
		"--service-account-signing-key-file=" + w("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		// The "kubernetes" Service cannot have a loopback endpoint (the reconciler logs an
		// Invalid error every 10 seconds); nothing in the tests needs that Service.
		"--endpoint-reconciler-type=none",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// No kube-controller-manager runs, so no "default" ServiceAccount is ever created;
		// the ServiceAccount admission plugin would then reject every pod.
		"--disable-admission-plugins=ServiceAccount",
		// Watch cache on (the default, as in production) except for one resource served
		// straight from etcd, where compaction gives 410 at once. See UncachedResource.
		"--watch-cache=true",
		"--watch-cache-sizes=" + UncachedResource + "#0",
		// API Priority and Fairness on, as in production (it is the default).
		"--enable-priority-and-fairness=true",
		"--profiling=false",
		// Close open watches when shutting down, as production setups do (OpenShift, k0s): by
		// default kube-apiserver waits for them, and watches over HTTP/2 (client-go's, and
		// apiclient's default to an https server) hold a restart for its whole shutdown
		// timeout. bench/README.md, "Watch transport", has the figures.
		"--shutdown-watch-termination-grace-period=5s",
		"--v=1",
	}
	return append(args, extra...)
}

// startAPIServerFirst picks a free port (retrying if another program took it) and starts
// kube-apiserver for the first time.
func (c *Cluster) startAPIServerFirst(ctx context.Context, extra []string) error {
	var lastErr error
	for range portAttempts {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		c.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
		c.apiserverArgs = c.apiserverFlags(ports[0], extra)
		lastErr = c.startAPIServer(ctx)
		if lastErr == nil || !strings.Contains(tail(c.APIServerLog, 30), "address already in use") {
			break
		}
	}
	return lastErr
}

// startAPIServer starts kube-apiserver with c.apiserverArgs and waits until it is ready.
func (c *Cluster) startAPIServer(ctx context.Context) error {
	p, err := startProcess(c.spawner, "kube-apiserver", c.apiserverBin, c.apiserverArgs, c.APIServerLog)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apiserver = p
	c.mu.Unlock()
	err = c.waitReady(ctx, p, c.apiserverReady)
	if err != nil {
		_ = p.stop(5 * time.Second)
		return fmt.Errorf("start kube-apiserver: %w\n--- %s (tail)\n%s", err, c.APIServerLog, tail(c.APIServerLog, 40))
	}
	return nil
}

// apiserverReady passes when /readyz is ok and the default namespace exists (the bootstrap
// controller creates it shortly after start; tests use it right away).
func (c *Cluster) apiserverReady(ctx context.Context) error {
	for _, path := range []string{"/readyz", "/api/v1/namespaces/default"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
		if err != nil {
			return err
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
		}
	}
	return nil
}

// waitReady polls ready until it passes, the process exits, or the start timeout or ctx ends.
func (c *Cluster) waitReady(ctx context.Context, p *process, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.startTimeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		reqCtx, reqCancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr = ready(reqCtx)
		reqCancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %v", p.name, p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)", p.name, ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

func (c *Cluster) writeKubeconfig() error {
	c.KubeconfigPath = filepath.Join(c.WorkDir, "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: %s
    namespace: default
current-context: e2e
`, c.URL, base64.StdEncoding.EncodeToString(c.CAPEM), AdminUser, c.Token, AdminUser)
	return os.WriteFile(c.KubeconfigPath, []byte(kubeconfig), 0o600)
}

// HTTPClient returns a plain net/http client that trusts the cluster's CA and sends the
// admin token: for requests that informerkit's apiclient cannot make yet, or must not be
// trusted to make (checking the server's raw answer).
func (c *Cluster) HTTPClient() *http.Client { return c.client }

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(req)
}

// APIServerPID returns the process ID of the running kube-apiserver, or 0 if none runs, so
// that measurements can read its CPU time and memory from /proc.
func (c *Cluster) APIServerPID() int {
	c.mu.Lock()
	p := c.apiserver
	c.mu.Unlock()
	if p == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after 30 seconds) and leaves
// etcd running. Requests fail until StartAPIServer.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	p := c.apiserver
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.stop(30 * time.Second)
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same port with the
// same flags, certificates, token and etcd, and waits until it is ready. The new process
// has a new, empty watch cache, so a watch from a resourceVersion older than the restart
// gets 410 Expired for every resource.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	stopped, p := c.stopped, c.apiserver
	c.mu.Unlock()
	if stopped {
		return errors.New("cluster is stopped")
	}
	if p != nil && !p.exited() {
		return errors.New("kube-apiserver is running")
	}
	return c.startAPIServer(ctx)
}

// RestartAPIServer stops kube-apiserver and starts it again (StopAPIServer, then
// StartAPIServer). Open watches end; clients must reconnect to the same URL.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// Stop stops kube-apiserver, then etcd: SIGTERM, then SIGKILL if a process does not exit in
// time. It is idempotent. The work directory and its logs are kept; see Cleanup.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var errs []error
	if c.apiserver != nil {
		errs = append(errs, c.apiserver.stop(30*time.Second))
	}
	if c.etcd != nil {
		errs = append(errs, c.etcd.stop(15*time.Second))
	}
	c.spawner.close()
	return errors.Join(errs...)
}

// Cleanup removes the work directory if Start created it (Options.WorkDir and
// $E2E_WORK_DIR unset). Call it after Stop, when the logs are no longer needed.
func (c *Cluster) Cleanup() error {
	if !c.ownWorkDir {
		return nil
	}
	return os.RemoveAll(c.WorkDir)
}

// LogTails returns the last n lines of the kube-apiserver and etcd logs, with headers naming
// the files: for failure reports.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	for _, path := range []string{c.APIServerLog, c.EtcdLog} {
		fmt.Fprintf(&b, "--- last %d lines of %s\n%s\n", n, path, tail(path, n))
	}
	return b.String()
}
