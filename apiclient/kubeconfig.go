package apiclient

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadOptions say where LoadConfigWithOptions and InClusterConfigWithOptions look. The zero
// value does what kubectl does: the files of $KUBECONFIG, else ~/.kube/config, else the
// in-cluster service account.
type LoadOptions struct {
	// Kubeconfig is an explicit kubeconfig path; when set, only this file is read and it
	// must exist (kubectl --kubeconfig). Default: $KUBECONFIG, else ~/.kube/config.
	Kubeconfig string
	// CurrentContext names the kubeconfig context to use instead of the file's
	// current-context (kubectl --context). Default: current-context.
	CurrentContext string
	// Namespace overrides the context's namespace (kubectl --namespace). Default: the
	// context's, or the service account's in a cluster.
	Namespace string
	// ServiceAccountDir is where the in-cluster token, ca.crt and namespace live. Default:
	// DefaultServiceAccountDir.
	ServiceAccountDir string
	// Getenv reads environment variables. Default: os.Getenv. Tests set it.
	Getenv func(string) string
	// HomeDir is the home directory holding .kube/config. Default: os.UserHomeDir().
	HomeDir string
}

// DefaultServiceAccountDir holds the token, ca.crt and namespace of a pod's service account.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// LoadConfig finds the configuration the way kubectl does:
//
//  1. an explicit kubeconfig (LoadOptions.Kubeconfig), which must exist;
//  2. else the files listed in $KUBECONFIG (missing ones are skipped), merged: for
//     clusters, users and contexts the first file that names an entry wins, whole;
//     current-context comes from the first file that sets it;
//  3. else ~/.kube/config if it exists;
//  4. else the in-cluster service account, when KUBERNETES_SERVICE_HOST and
//     KUBERNETES_SERVICE_PORT are set.
//
// Relative paths in a kubeconfig (certificate files, token files, exec commands that
// contain a slash) are resolved against the directory of the file that names them. The
// referenced certificate and key files are read now, so that a broken kubeconfig is
// reported by LoadConfig with the file, context, entry and field, e.g.
//
//	kubeconfig /x/config: context "dev": user "bob": client-certificate "/missing.crt": no such file or directory
//
// Token files stay paths (they rotate). Errors never contain credentials.
func LoadConfig() (*Config, error) { return LoadConfigWithOptions(LoadOptions{}) }

// LoadConfigWithOptions is LoadConfig with an explicit kubeconfig, context or namespace
// (kubectl's --kubeconfig, --context and --namespace), or another environment.
func LoadConfigWithOptions(o LoadOptions) (*Config, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	var files []string
	explicit := false
	switch {
	case o.Kubeconfig != "":
		files, explicit = []string{o.Kubeconfig}, true
	case o.Getenv("KUBECONFIG") != "":
		for _, p := range filepath.SplitList(o.Getenv("KUBECONFIG")) {
			if p != "" {
				files = append(files, p)
			}
		}
	default:
		home := o.HomeDir
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home != "" {
			files = []string{filepath.Join(home, ".kube", "config")}
		}
	}
	merged, err := loadKubeconfigs(files, explicit)
	if err != nil {
		return nil, err
	}
	if merged.empty() {
		if cfg, err := inClusterConfig(o); err == nil || !errors.Is(err, errNotInCluster) {
			return cfg, err
		}
		if len(files) == 0 {
			return nil, errors.New("apiclient: no kubeconfig found and not running in a cluster")
		}
		return nil, fmt.Errorf("apiclient: no usable kubeconfig (looked at %s) and not running in a cluster", strings.Join(files, ", "))
	}
	return merged.resolve(o)
}

// InClusterConfig builds the configuration of a pod: the API server at
// KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, the service-account token file (re-read
// as it rotates), its CA and namespace.
func InClusterConfig() (*Config, error) { return InClusterConfigWithOptions(LoadOptions{}) }

// InClusterConfigWithOptions is InClusterConfig with another service-account directory,
// namespace or environment; the kubeconfig fields of o are ignored.
func InClusterConfigWithOptions(o LoadOptions) (*Config, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return inClusterConfig(o)
}

var errNotInCluster = errors.New("apiclient: not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")

func inClusterConfig(o LoadOptions) (*Config, error) {
	host, port := o.Getenv("KUBERNETES_SERVICE_HOST"), o.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errNotInCluster
	}
	dir := o.ServiceAccountDir
	if dir == "" {
		dir = DefaultServiceAccountDir
	}
	// Inside the cluster the link to the API server is the cluster network: gzip would cost
	// kube-apiserver CPU and save no time (bench/README.md, "Compression").
	cfg := &Config{Host: "https://" + net.JoinHostPort(host, port), Compression: CompressionNone}
	tokenPath := filepath.Join(dir, "token")
	if _, err := os.Stat(tokenPath); err != nil {
		return nil, fmt.Errorf("apiclient: in-cluster: token %q: %w", tokenPath, errors.Unwrap(err))
	}
	cfg.BearerTokenFile = tokenPath
	caPath := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caPath); err == nil {
		cfg.TLS.CAFile = caPath
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("apiclient: in-cluster: CA %q: %w", caPath, errors.Unwrap(err))
	}
	if ns, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
		cfg.Namespace = strings.TrimSpace(string(ns))
	}
	if o.Namespace != "" {
		cfg.Namespace = o.Namespace
	}
	return cfg, nil
}

// kubeconfig file format (the fields informerkit reads).
type kcFile struct {
	CurrentContext string      `yaml:"current-context"`
	Clusters       []kcCluster `yaml:"clusters"`
	Users          []kcUser    `yaml:"users"`
	Contexts       []kcContext `yaml:"contexts"`
}

type kcCluster struct {
	Name    string `yaml:"name"`
	Cluster struct {
		Server                   string `yaml:"server"`
		CertificateAuthority     string `yaml:"certificate-authority"`
		CertificateAuthorityData string `yaml:"certificate-authority-data"`
		InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		TLSServerName            string `yaml:"tls-server-name"`
		ProxyURL                 string `yaml:"proxy-url"`
		DisableCompression       bool   `yaml:"disable-compression"`
	} `yaml:"cluster"`
	file string
}

type kcUser struct {
	Name string `yaml:"name"`
	User struct {
		Token                 string    `yaml:"token"`
		TokenFile             string    `yaml:"tokenFile"`
		ClientCertificate     string    `yaml:"client-certificate"`
		ClientCertificateData string    `yaml:"client-certificate-data"`
		ClientKey             string    `yaml:"client-key"`
		ClientKeyData         string    `yaml:"client-key-data"`
		Username              string    `yaml:"username"`
		Password              string    `yaml:"password"`
		Exec                  *kcExec   `yaml:"exec"`
		AuthProvider          *struct{} `yaml:"auth-provider"`
	} `yaml:"user"`
	file string
}

type kcExec struct {
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	APIVersion         string `yaml:"apiVersion"`
	InteractiveMode    string `yaml:"interactiveMode"`
	ProvideClusterInfo bool   `yaml:"provideClusterInfo"`
}

type kcContext struct {
	Name    string `yaml:"name"`
	Context struct {
		Cluster   string `yaml:"cluster"`
		User      string `yaml:"user"`
		Namespace string `yaml:"namespace"`
	} `yaml:"context"`
	file string
}

// mergedKubeconfig is several kubeconfig files merged by kubectl's rules.
type mergedKubeconfig struct {
	currentContext     string
	currentContextFile string
	clusters           map[string]*kcCluster
	users              map[string]*kcUser
	contexts           map[string]*kcContext
	files              []string
}

func (m *mergedKubeconfig) empty() bool {
	return len(m.clusters) == 0 && len(m.users) == 0 && len(m.contexts) == 0 && m.currentContext == ""
}

func loadKubeconfigs(files []string, explicit bool) (*mergedKubeconfig, error) {
	m := &mergedKubeconfig{clusters: map[string]*kcCluster{}, users: map[string]*kcUser{}, contexts: map[string]*kcContext{}}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !explicit {
				continue
			}
			return nil, fmt.Errorf("kubeconfig %s: %w", path, errors.Unwrap(err))
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		var f kcFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", path, sanitizeYAMLError(err))
		}
		m.files = append(m.files, path)
		if m.currentContext == "" && f.CurrentContext != "" {
			m.currentContext, m.currentContextFile = f.CurrentContext, path
		}
		for i := range f.Clusters {
			c := &f.Clusters[i]
			if _, ok := m.clusters[c.Name]; !ok {
				c.file = abs
				m.clusters[c.Name] = c
			}
		}
		for i := range f.Users {
			u := &f.Users[i]
			if _, ok := m.users[u.Name]; !ok {
				u.file = abs
				m.users[u.Name] = u
			}
		}
		for i := range f.Contexts {
			c := &f.Contexts[i]
			if _, ok := m.contexts[c.Name]; !ok {
				c.file = abs
				m.contexts[c.Name] = c
			}
		}
	}
	return m, nil
}

// sanitizeYAMLError keeps the line information of a YAML error but never the file's text
// (which may hold a token).
func sanitizeYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			if i := strings.Index(e, " cannot unmarshal"); i > 0 {
				e = e[:i] + " has the wrong type"
			}
			lines = append(lines, e)
		}
		return fmt.Errorf("invalid YAML: %s", strings.Join(lines, "; "))
	}
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		if j := strings.Index(msg[i:], ":"); j > 0 {
			return fmt.Errorf("invalid YAML at %s", msg[i:i+j])
		}
	}
	return errors.New("invalid YAML")
}

func (m *mergedKubeconfig) resolve(o LoadOptions) (*Config, error) {
	name, where := o.CurrentContext, "the context override"
	if name == "" {
		name, where = m.currentContext, "current-context in kubeconfig "+m.currentContextFile
	}
	if name == "" {
		return nil, fmt.Errorf("kubeconfig %s: no current-context set and no context given", strings.Join(m.files, ", "))
	}
	kctx, ok := m.contexts[name]
	if !ok {
		return nil, fmt.Errorf("kubeconfig %s: context %q (from %s) not found", strings.Join(m.files, ", "), name, where)
	}
	prefix := fmt.Sprintf("kubeconfig %s: context %q", kctx.file, name)
	if kctx.Context.Cluster == "" {
		return nil, fmt.Errorf("%s: cluster is not set", prefix)
	}
	cl, ok := m.clusters[kctx.Context.Cluster]
	if !ok {
		return nil, fmt.Errorf("%s: cluster %q not found", prefix, kctx.Context.Cluster)
	}
	cfg := &Config{Namespace: kctx.Context.Namespace}
	if o.Namespace != "" {
		cfg.Namespace = o.Namespace
	}
	if err := applyCluster(cfg, cl, fmt.Sprintf("kubeconfig %s: context %q: cluster %q", cl.file, name, cl.Name)); err != nil {
		return nil, err
	}
	if kctx.Context.User != "" {
		u, ok := m.users[kctx.Context.User]
		if !ok {
			return nil, fmt.Errorf("%s: user %q not found", prefix, kctx.Context.User)
		}
		if err := applyUser(cfg, u, fmt.Sprintf("kubeconfig %s: context %q: user %q", u.file, name, u.Name)); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func resolvePath(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return filepath.Join(filepath.Dir(file), p)
}

func readRef(prefix, field, file, p string) ([]byte, error) {
	path := resolvePath(file, p)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %q: %w", prefix, field, path, unwrapPathError(err))
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func decodeData(prefix, field, s string) ([]byte, error) {
	b, err := base64Std.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%s: %s is not valid base64", prefix, field)
	}
	return b, nil
}

func applyCluster(cfg *Config, cl *kcCluster, prefix string) error {
	c := cl.Cluster
	if c.Server == "" {
		return fmt.Errorf("%s: server is not set", prefix)
	}
	if _, err := parseHost(c.Server); err != nil {
		return fmt.Errorf("%s: server: %v", prefix, strings.TrimPrefix(err.Error(), "apiclient: "))
	}
	cfg.Host = c.Server
	cfg.TLS.ServerName = c.TLSServerName
	cfg.TLS.Insecure = c.InsecureSkipTLSVerify
	cfg.ProxyURL = c.ProxyURL
	if c.DisableCompression {
		cfg.Compression = CompressionNone
	}
	switch {
	case c.CertificateAuthorityData != "":
		data, err := decodeData(prefix, "certificate-authority-data", c.CertificateAuthorityData)
		if err != nil {
			return err
		}
		cfg.TLS.CAData = data
	case c.CertificateAuthority != "":
		data, err := readRef(prefix, "certificate-authority", cl.file, c.CertificateAuthority)
		if err != nil {
			return err
		}
		cfg.TLS.CAFile = resolvePath(cl.file, c.CertificateAuthority)
		cfg.TLS.CAData = data
	}
	if cfg.TLS.Insecure && len(cfg.TLS.CAData) > 0 {
		return fmt.Errorf("%s: insecure-skip-tls-verify and a certificate authority are mutually exclusive", prefix)
	}
	return nil
}

func applyUser(cfg *Config, ku *kcUser, prefix string) error {
	u := ku.User
	if u.AuthProvider != nil {
		return fmt.Errorf("%s: auth-provider is not supported; use an exec credential plugin", prefix)
	}
	cfg.BearerToken = u.Token
	if u.TokenFile != "" {
		path := resolvePath(ku.file, u.TokenFile)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s: tokenFile %q: %w", prefix, path, unwrapPathError(err))
		}
		cfg.BearerTokenFile = path
	}
	cfg.Username, cfg.Password = u.Username, u.Password
	var err error
	switch {
	case u.ClientCertificateData != "":
		if cfg.TLS.CertData, err = decodeData(prefix, "client-certificate-data", u.ClientCertificateData); err != nil {
			return err
		}
	case u.ClientCertificate != "":
		if cfg.TLS.CertData, err = readRef(prefix, "client-certificate", ku.file, u.ClientCertificate); err != nil {
			return err
		}
		cfg.TLS.CertFile = resolvePath(ku.file, u.ClientCertificate)
	}
	switch {
	case u.ClientKeyData != "":
		if cfg.TLS.KeyData, err = decodeData(prefix, "client-key-data", u.ClientKeyData); err != nil {
			return err
		}
	case u.ClientKey != "":
		if cfg.TLS.KeyData, err = readRef(prefix, "client-key", ku.file, u.ClientKey); err != nil {
			return err
		}
		cfg.TLS.KeyFile = resolvePath(ku.file, u.ClientKey)
	}
	if (len(cfg.TLS.CertData) > 0) != (len(cfg.TLS.KeyData) > 0) {
		return fmt.Errorf("%s: client-certificate and client-key must be set together", prefix)
	}
	if e := u.Exec; e != nil {
		if e.Command == "" {
			return fmt.Errorf("%s: exec: command is not set", prefix)
		}
		cmd := e.Command
		if strings.ContainsRune(cmd, '/') || strings.ContainsRune(cmd, filepath.Separator) {
			cmd = resolvePath(ku.file, cmd)
		}
		ec := &ExecConfig{Command: cmd, Args: e.Args, APIVersion: e.APIVersion, InteractiveMode: e.InteractiveMode, ProvideClusterInfo: e.ProvideClusterInfo}
		for _, v := range e.Env {
			ec.Env = append(ec.Env, ExecEnvVar{Name: v.Name, Value: v.Value})
		}
		if ec.APIVersion != "" && ec.APIVersion != execAPIV1 && ec.APIVersion != execAPIV1beta1 {
			return fmt.Errorf("%s: exec: apiVersion %q is not supported", prefix, ec.APIVersion)
		}
		if ec.InteractiveMode == "Always" {
			return fmt.Errorf("%s: exec: interactiveMode Always is not supported", prefix)
		}
		cfg.Exec = ec
	}
	return nil
}
