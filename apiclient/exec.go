package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// ExecCredential API versions understood by the exec plugin runner.
const (
	execAPIV1      = "client.authentication.k8s.io/v1"
	execAPIV1beta1 = "client.authentication.k8s.io/v1beta1"
)

// Bounds of an exec credential plugin run, where client-go has none: a plugin that hangs
// would block every request, one that writes without end would grow the process.
const (
	// DefaultExecTimeout bounds a plugin run when ExecConfig.Timeout is 0. Plugins that fetch
	// a token from a cloud provider take a few seconds; informerkit never runs them
	// interactively.
	DefaultExecTimeout = 60 * time.Second
	// DefaultExecMaxOutput bounds a plugin's standard output when ExecConfig.MaxOutput is 0.
	// An ExecCredential holds a token or a client certificate: a few KiB.
	DefaultExecMaxOutput = 1 << 20
)

// ErrExecOutputTooLarge is wrapped by the error of an exec plugin whose output exceeded
// ExecConfig.MaxOutput; the plugin is killed.
var ErrExecOutputTooLarge = errors.New("output too large")

// execProvider runs a client.authentication.k8s.io credential plugin and caches its answer
// until the expirationTimestamp it names (forever if it names none), or until the server
// rejects the credential with a 401. Runs are serialised: concurrent requests wait for one
// run instead of starting several.
type execProvider struct {
	cfg  ExecConfig
	info []byte // KUBERNETES_EXEC_INFO
	log  *slog.Logger

	mu   sync.Mutex
	cred *execResult
}

// execResult is one plugin answer.
type execResult struct {
	token  string
	cert   *tls.Certificate
	expiry time.Time
}

type execCredential struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Spec       execCredentialSpec    `json:"spec"`
	Status     *execCredentialStatus `json:"status,omitempty"`
}

type execCredentialSpec struct {
	Interactive bool         `json:"interactive"`
	Cluster     *execCluster `json:"cluster,omitempty"`
}

type execCluster struct {
	Server                   string          `json:"server"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte          `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string          `json:"proxy-url,omitempty"`
	Config                   json.RawMessage `json:"config,omitempty"`
}

type execCredentialStatus struct {
	ExpirationTimestamp   *meta.Time `json:"expirationTimestamp,omitempty"`
	Token                 string     `json:"token,omitempty"`
	ClientCertificateData string     `json:"clientCertificateData,omitempty"`
	ClientKeyData         string     `json:"clientKeyData,omitempty"`
}

func newExecProvider(cfg *Config) (*execProvider, error) {
	ec := *cfg.Exec
	if ec.Command == "" {
		return nil, errors.New("apiclient: exec plugin: command is empty")
	}
	if ec.APIVersion == "" {
		ec.APIVersion = execAPIV1
	}
	switch {
	case ec.Timeout == 0:
		ec.Timeout = DefaultExecTimeout
	case ec.Timeout < 0:
		ec.Timeout = 0
	}
	if ec.MaxOutput <= 0 {
		ec.MaxOutput = DefaultExecMaxOutput
	}
	if ec.APIVersion != execAPIV1 && ec.APIVersion != execAPIV1beta1 {
		return nil, fmt.Errorf("apiclient: exec plugin %q: apiVersion %q is not supported (want %s)", ec.Command, ec.APIVersion, execAPIV1)
	}
	if ec.InteractiveMode == "Always" {
		return nil, fmt.Errorf("apiclient: exec plugin %q: interactiveMode Always is not supported (informerkit never runs plugins interactively)", ec.Command)
	}
	spec := execCredential{APIVersion: ec.APIVersion, Kind: "ExecCredential", Spec: execCredentialSpec{Interactive: false}}
	if ec.ProvideClusterInfo {
		ca := cfg.TLS.CAData
		if len(ca) == 0 && cfg.TLS.CAFile != "" {
			data, err := os.ReadFile(cfg.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("apiclient: exec plugin %q: cluster info: CA file %q: %w", ec.Command, cfg.TLS.CAFile, errors.Unwrap(err))
			}
			ca = data
		}
		spec.Spec.Cluster = &execCluster{
			Server:                   cfg.Host,
			TLSServerName:            cfg.TLS.ServerName,
			InsecureSkipTLSVerify:    cfg.TLS.Insecure,
			CertificateAuthorityData: ca,
			ProxyURL:                 cfg.ProxyURL,
			Config:                   ec.ClusterConfig,
		}
	}
	info, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return &execProvider{cfg: ec, info: info, log: loggerOf(cfg)}, nil
}

// get returns the cached credential or runs the plugin.
func (p *execProvider) get(ctx context.Context) (*execResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cred != nil && (p.cred.expiry.IsZero() || time.Now().Before(p.cred.expiry)) {
		return p.cred, nil
	}
	cred, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	p.cred = cred
	return cred, nil
}

// invalidate drops cred if it is still the cached credential (a 401 rejected it).
func (p *execProvider) invalidate(cred *execResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cred == cred {
		p.cred = nil
	}
}

func (p *execProvider) run(ctx context.Context) (*execResult, error) {
	name := p.cfg.Command
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if timeout := p.cfg.Timeout; timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			te := &TimeoutError{Op: "exec plugin", Path: name, Limit: timeout, Setting: "ExecConfig.Timeout"}
			logDeadline(p.log, te)
			cancel(te)
		})
		defer t.Stop()
	}
	cmd := exec.CommandContext(rctx, name, p.cfg.Args...)
	env := os.Environ()
	for _, e := range p.cfg.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	cmd.Env = append(env, "KUBERNETES_EXEC_INFO="+string(p.info))
	stdout := &cappedBuffer{max: p.cfg.MaxOutput, full: func() {
		cancel(fmt.Errorf("apiclient: exec plugin %q: %w (more than %d bytes)", name, ErrExecOutputTooLarge, p.cfg.MaxOutput))
	}}
	stderr := &limitedBuffer{max: 4 << 10}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			return nil, context.Cause(rctx) // the plugin's deadline or output limit
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return nil, fmt.Errorf("apiclient: exec plugin %q: %w: %s", name, err, msg)
		}
		return nil, fmt.Errorf("apiclient: exec plugin %q: %w", name, err)
	}
	var out execCredential
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		// Never quote the output: it may hold a credential.
		return nil, fmt.Errorf("apiclient: exec plugin %q: output is not an ExecCredential: %s", name, jsonErrorKind(err))
	}
	if out.Kind != "ExecCredential" || out.APIVersion != p.cfg.APIVersion {
		return nil, fmt.Errorf("apiclient: exec plugin %q: output has apiVersion %q kind %q, want %s ExecCredential",
			name, out.APIVersion, out.Kind, p.cfg.APIVersion)
	}
	st := out.Status
	if st == nil {
		return nil, fmt.Errorf("apiclient: exec plugin %q: output has no status", name)
	}
	res := &execResult{token: st.Token}
	if st.ExpirationTimestamp != nil {
		res.expiry = st.ExpirationTimestamp.Time
	}
	switch {
	case st.ClientCertificateData != "" && st.ClientKeyData != "":
		cert, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("apiclient: exec plugin %q: client certificate: %w", name, err)
		}
		res.cert = &cert
	case st.ClientCertificateData != "" || st.ClientKeyData != "":
		return nil, fmt.Errorf("apiclient: exec plugin %q: clientCertificateData and clientKeyData must be set together", name)
	case st.Token == "":
		return nil, fmt.Errorf("apiclient: exec plugin %q: status has neither a token nor a client certificate", name)
	}
	return res, nil
}

// jsonErrorKind describes a JSON error without echoing any of the input.
func jsonErrorKind(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	return "invalid JSON"
}

// cappedBuffer holds a plugin's output up to max bytes; past that it calls full (which
// kills the plugin) and refuses the rest. The buffer is a field, not embedded: io.Copy
// would use an embedded bytes.Buffer's ReadFrom, which reads without a limit.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	full func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.full()
		return 0, ErrExecOutputTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// base64Std is used for kubeconfig *-data fields.
var base64Std = base64.StdEncoding
