package apiclient

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const testCAPEM = "-----BEGIN CERTIFICATE-----\nnot checked by LoadConfig\n-----END CERTIFICATE-----\n"

func TestKubeconfigMergeRules(t *testing.T) {
	dir := t.TempDir()
	first := writeFile(t, filepath.Join(dir, "a", "config"), `
apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster:
    server: https://first.example:6443
    certificate-authority: certs/ca.crt
users:
- name: u1
  user:
    tokenFile: tokens/t1
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team-a}
`)
	writeFile(t, filepath.Join(dir, "a", "certs", "ca.crt"), testCAPEM)
	writeFile(t, filepath.Join(dir, "a", "tokens", "t1"), "token-one\n")
	second := writeFile(t, filepath.Join(dir, "b", "config"), `
current-context: dev
clusters:
- name: c1
  cluster: {server: https://second.example:6443}
- name: c2
  cluster: {server: https://c2.example, insecure-skip-tls-verify: true, tls-server-name: api.internal, proxy-url: "socks5://proxy:1080"}
users:
- name: u1
  user: {token: should-not-win}
- name: u2
  user: {username: admin, password: pw, client-certificate-data: `+base64.StdEncoding.EncodeToString([]byte("CERT"))+`, client-key: key.pem}
contexts:
- name: dev
  context: {cluster: c2, user: u2}
- name: prod
  context: {cluster: c2, user: u2, namespace: prod-ns}
`)
	writeFile(t, filepath.Join(dir, "b", "key.pem"), "KEY")
	third := writeFile(t, filepath.Join(dir, "c", "config"), "current-context: prod\n")
	missing := filepath.Join(dir, "missing", "config")

	kubeconfig := strings.Join([]string{missing, first, second, third}, string(os.PathListSeparator))
	cfg, err := LoadConfigWithOptions(LoadOptions{Getenv: env(map[string]string{"KUBECONFIG": kubeconfig})})
	if err != nil {
		t.Fatal(err)
	}
	// current-context from the first file that sets it (second), context "dev" from the
	// first file that names it (first), cluster c1 and user u1 from the first file.
	if cfg.Host != "https://first.example:6443" || cfg.Namespace != "team-a" {
		t.Errorf("host %q namespace %q", cfg.Host, cfg.Namespace)
	}
	if want := filepath.Join(dir, "a", "certs", "ca.crt"); cfg.TLS.CAFile != want || string(cfg.TLS.CAData) != testCAPEM {
		t.Errorf("CA file %q (want %q), data %q", cfg.TLS.CAFile, want, cfg.TLS.CAData)
	}
	if want := filepath.Join(dir, "a", "tokens", "t1"); cfg.BearerTokenFile != want || cfg.BearerToken != "" {
		t.Errorf("token file %q (want %q), token set: %v", cfg.BearerTokenFile, want, cfg.BearerToken != "")
	}

	cfg, err = LoadConfigWithOptions(LoadOptions{Getenv: env(map[string]string{"KUBECONFIG": kubeconfig}), CurrentContext: "prod", Namespace: "override"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://c2.example" || !cfg.TLS.Insecure || cfg.TLS.ServerName != "api.internal" || cfg.ProxyURL != "socks5://proxy:1080" ||
		cfg.Namespace != "override" || cfg.Username != "admin" || cfg.Password != "pw" || string(cfg.TLS.CertData) != "CERT" ||
		string(cfg.TLS.KeyData) != "KEY" || cfg.TLS.KeyFile != filepath.Join(dir, "b", "key.pem") {
		t.Errorf("prod config = %v", cfg)
	}

	// An explicit path reads only that file.
	if _, err := LoadConfigWithOptions(LoadOptions{Kubeconfig: third, Getenv: env(map[string]string{"KUBECONFIG": kubeconfig})}); err == nil ||
		!strings.Contains(err.Error(), `context "prod"`) {
		t.Errorf("explicit file: err = %v", err)
	}
	// ~/.kube/config when KUBECONFIG is unset.
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".kube", "config"), "current-context: x\nclusters:\n- name: c\n  cluster: {server: \"http://home:8080\"}\ncontexts:\n- name: x\n  context: {cluster: c}\n")
	cfg, err = LoadConfigWithOptions(LoadOptions{Getenv: env(nil), HomeDir: home})
	if err != nil || cfg.Host != "http://home:8080" {
		t.Fatalf("home config: %v %v", cfg, err)
	}
}

func TestKubeconfigErrorsNameFileContextField(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"missing cert", `
current-context: dev
clusters: [{name: c, cluster: {server: "https://x"}}]
users: [{name: bob, user: {client-certificate: /missing.crt, client-key: /missing.key}}]
contexts: [{name: dev, context: {cluster: c, user: bob}}]`,
			[]string{`context "dev": user "bob": client-certificate "/missing.crt": no such file`}},
		{"missing relative CA", `
current-context: dev
clusters: [{name: c, cluster: {server: "https://x", certificate-authority: rel/ca.crt}}]
contexts: [{name: dev, context: {cluster: c}}]`,
			[]string{`context "dev": cluster "c": certificate-authority "` + filepath.Join(dir, "rel", "ca.crt") + `": no such file`}},
		{"unknown context", "current-context: nope\ncontexts: [{name: dev, context: {cluster: c}}]", []string{`context "nope"`, "not found"}},
		{"unknown cluster", "current-context: dev\ncontexts: [{name: dev, context: {cluster: c}}]", []string{`context "dev": cluster "c" not found`}},
		{"unknown user", "current-context: dev\nclusters: [{name: c, cluster: {server: \"https://x\"}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]", []string{`context "dev": user "u" not found`}},
		{"no server", "current-context: dev\nclusters: [{name: c, cluster: {}}]\ncontexts: [{name: dev, context: {cluster: c}}]", []string{`cluster "c": server is not set`}},
		{"bad base64", "current-context: dev\nclusters: [{name: c, cluster: {server: \"https://x\", certificate-authority-data: \"!!!\"}}]\ncontexts: [{name: dev, context: {cluster: c}}]", []string{"certificate-authority-data is not valid base64"}},
		{"insecure with CA", "current-context: dev\nclusters: [{name: c, cluster: {server: \"https://x\", insecure-skip-tls-verify: true, certificate-authority-data: \"QUJD\"}}]\ncontexts: [{name: dev, context: {cluster: c}}]", []string{"mutually exclusive"}},
		{"missing token file", "current-context: dev\nclusters: [{name: c, cluster: {server: \"https://x\"}}]\nusers: [{name: u, user: {tokenFile: tok}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]", []string{`user "u": tokenFile "` + filepath.Join(dir, "tok") + `"`}},
		{"auth provider", "current-context: dev\nclusters: [{name: c, cluster: {server: \"https://x\"}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]", []string{"auth-provider is not supported"}},
		{"bad yaml keeps secrets", "users: [{name: u, user: {token: sup3rs3cret}}]\ncontexts: [[[", []string{"invalid YAML"}},
		{"wrong type keeps secrets", "users: [{name: u, user: {token: sup3rs3cret}}]\ncurrent-context: [sup3rs3cret]", []string{"has the wrong type"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, "config"), c.yaml)
			_, err := LoadConfigWithOptions(LoadOptions{Kubeconfig: path})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "kubeconfig "+path) {
				t.Errorf("error %q does not start with the file name", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "sup3rs3cret") {
				t.Errorf("error %q leaks the token", msg)
			}
		})
	}
}

func TestInClusterConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "token"), "sa-token")
	writeFile(t, filepath.Join(dir, "ca.crt"), testCAPEM)
	writeFile(t, filepath.Join(dir, "namespace"), "kube-system\n")
	e := env(map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"})
	cfg, err := LoadConfigWithOptions(LoadOptions{Getenv: e, ServiceAccountDir: dir, HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://[fd00::1]:443" || cfg.BearerTokenFile != filepath.Join(dir, "token") ||
		cfg.TLS.CAFile != filepath.Join(dir, "ca.crt") || cfg.Namespace != "kube-system" || cfg.Compression != CompressionNone {
		t.Fatalf("config = %v", cfg)
	}
	if _, err := LoadConfigWithOptions(LoadOptions{Getenv: env(nil), HomeDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not running in a cluster") {
		t.Fatalf("no config at all: %v", err)
	}
	if _, err := InClusterConfigWithOptions(LoadOptions{Getenv: e, ServiceAccountDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("missing token: %v", err)
	}
}

func TestConfigRedaction(t *testing.T) {
	cfg := &Config{Host: "https://x", BearerToken: "tok-SECRET", Password: "pw-SECRET",
		TLS:      TLSConfig{KeyData: []byte("key-SECRET")},
		Exec:     &ExecConfig{Command: "plugin", Env: []ExecEnvVar{{Name: "API_KEY", Value: "env-SECRET"}}},
		ProxyURL: "http://user:proxy-SECRET@proxy:3128"}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", cfg, "value", *cfg)
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", *cfg), logs.String()} {
		if strings.Contains(out, "SECRET") {
			t.Errorf("secret in %q", out)
		}
		if !strings.Contains(out, "https://x") {
			t.Errorf("host missing from %q", out)
		}
	}
	if cfg.BearerToken != "tok-SECRET" || cfg.Exec.Env[0].Value != "env-SECRET" {
		t.Fatal("redaction changed the config")
	}
}
