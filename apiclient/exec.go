package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

// execProvider runs a client.authentication.k8s.io credential plugin and caches its answer
// until the expirationTimestamp it names (forever if it names none), or until the server
// rejects the credential with a 401. Runs are serialised: concurrent requests wait for one
// run instead of starting several.
type execProvider struct {
	cfg  ExecConfig
	info []byte // KUBERNETES_EXEC_INFO

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
	Server                   string `json:"server"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string `json:"proxy-url,omitempty"`
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
		}
	}
	info, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return &execProvider{cfg: ec, info: info}, nil
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
	cmd := exec.CommandContext(ctx, name, p.cfg.Args...)
	env := os.Environ()
	for _, e := range p.cfg.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	cmd.Env = append(env, "KUBERNETES_EXEC_INFO="+string(p.info))
	var stdout bytes.Buffer
	stderr := &limitedBuffer{max: 4 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
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
