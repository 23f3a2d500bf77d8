package apiclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// handlerTransport serves requests with an in-process handler: no network, so synctest's
// fake clock drives the client's retry and rate-limit waits.
func handlerTransport(h http.HandlerFunc) func(http.RoundTripper) http.RoundTripper {
	return func(http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec := httptest.NewRecorder()
			h(rec, r)
			return rec.Result(), nil
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRetriesHonourRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		cfg := &Config{Host: "http://api", QPS: -1, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
			switch calls.Add(1) {
			case 1:
				w.Header().Set("Retry-After", "7")
				writeJSON(w, 429, map[string]any{"kind": "Status", "reason": "TooManyRequests", "code": 429})
			case 2:
				w.Header().Set("Retry-After", "3")
				http.Error(w, "upstream down", 503)
			default:
				writeJSON(w, 200, map[string]any{"metadata": map[string]any{"name": "p"}})
			}
		})}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns").Get(context.Background(), "p", GetOptions{})
		if err != nil || p.Name != "p" {
			t.Fatalf("Get = %v, %v", p, err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("waited %v, want the 7 s + 3 s the server asked for", d)
		}
		if calls.Load() != 3 {
			t.Errorf("%d calls", calls.Load())
		}
	})
}

func TestRetriesBoundedAndOnlyIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		cfg := &Config{Host: "http://api", QPS: -1, MaxRetries: 3, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Header().Set("Retry-After", "2")
			writeJSON(w, 503, map[string]any{"kind": "Status", "reason": "ServiceUnavailable", "code": 503})
		})}
		c, _ := New(cfg)
		pods := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")
		_, err := pods.Get(context.Background(), "p", GetOptions{})
		if !meta.IsServiceUnavailable(err) || calls.Load() != 4 {
			t.Fatalf("err %v after %d calls, want 503 after 1+3", err, calls.Load())
		}
		if d, ok := meta.RetryAfter(err); !ok || d != 2*time.Second {
			t.Errorf("RetryAfter = %v, %v", d, ok)
		}
		calls.Store(0)
		if _, err := pods.Create(context.Background(), &testobj.Pod{}, CreateOptions{}); !meta.IsServiceUnavailable(err) || calls.Load() != 1 {
			t.Fatalf("POST: err %v after %d calls, want no retry", err, calls.Load())
		}
		// No Retry-After: exponential back-off, still bounded, and the context ends it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c2, _ := New(&Config{Host: "http://api", QPS: -1, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "busy", 500)
		})})
		_, err = NewResource[*testobj.Pod](c2, testobj.PodGVR).Get(ctx, "p", GetOptions{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		// 4xx other than 429 is not retried.
		calls.Store(0)
		c3, _ := New(&Config{Host: "http://api", QPS: -1, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.Error(w, "nope", 404)
		})})
		if _, err := NewResource[*testobj.Pod](c3, testobj.PodGVR).Get(context.Background(), "p", GetOptions{}); !meta.IsNotFound(err) || calls.Load() != 1 {
			t.Fatalf("404: %v after %d calls", err, calls.Load())
		}
	})
}

func TestClientRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := New(&Config{Host: "http://api", QPS: 10, Burst: 2, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{})
		})})
		start := time.Now()
		for i := 0; i < 6; i++ {
			if _, err := c.Do(context.Background(), Request{Path: "/api"}); err != nil {
				t.Fatal(err)
			}
		}
		// Two from the burst, then four at 10/s.
		if d := time.Since(start); d != 400*time.Millisecond {
			t.Errorf("6 requests took %v, want 400ms", d)
		}
	})
}

func TestTLSVerificationAndHTTP2(t *testing.T) {
	var proto atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		writeJSON(w, 200, map[string]any{"metadata": map[string]any{"name": "p"}})
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ctx := context.Background()

	get := func(cfg *Config) error {
		c, err := New(cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = NewResource[*testobj.Pod](c, testobj.PodGVR).Get(ctx, "p", GetOptions{})
		return err
	}
	// Verification is on by default: an unknown CA fails (and is not retried).
	if err := get(&Config{Host: srv.URL, MaxRetries: -1}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unverified server: %v", err)
	}
	if err := get(&Config{Host: srv.URL, TLS: TLSConfig{CAData: caPEM}}); err != nil {
		t.Fatalf("with CA: %v", err)
	}
	if proto.Load() != 2 {
		t.Errorf("protocol HTTP/%d, want HTTP/2", proto.Load())
	}
	// A wrong server name fails; the right one (httptest's cert is for example.com) passes.
	if err := get(&Config{Host: srv.URL, MaxRetries: -1, TLS: TLSConfig{CAData: caPEM, ServerName: "wrong.test"}}); err == nil {
		t.Fatal("wrong server name accepted")
	}
	if err := get(&Config{Host: srv.URL, TLS: TLSConfig{CAData: caPEM, ServerName: "example.com"}}); err != nil {
		t.Fatalf("server name example.com: %v", err)
	}
	if err := get(&Config{Host: srv.URL, TLS: TLSConfig{Insecure: true}}); err != nil {
		t.Fatalf("insecure: %v", err)
	}
	if _, err := New(&Config{Host: srv.URL, TLS: TLSConfig{Insecure: true, CAData: caPEM}}); err == nil {
		t.Fatal("insecure with a CA accepted")
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(caFile, caPEM, 0o600)
	if err := get(&Config{Host: srv.URL, TLS: TLSConfig{CAFile: caFile}}); err != nil {
		t.Fatalf("with CA file: %v", err)
	}
	if _, err := New(&Config{Host: srv.URL, TLS: TLSConfig{CAData: []byte("junk")}}); err == nil {
		t.Fatal("junk CA accepted")
	}
}

func TestAuthHeaders(t *testing.T) {
	var mu sync.Mutex
	var got []string
	h := handlerTransport(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("User-Agent"))
		mu.Unlock()
		writeJSON(w, 200, map[string]any{})
	})
	for _, cfg := range []*Config{
		{Host: "http://api", BearerToken: "abc", AllowCredentialsOverHTTP: true, WrapTransport: h, UserAgent: "ctl/1"},
		{Host: "http://api", Username: "u", Password: "p", AllowCredentialsOverHTTP: true, WrapTransport: h},
		{Host: "http://api", WrapTransport: h},
	} {
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(context.Background(), Request{Path: "/api"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Bearer abc|ctl/1", "Basic dTpw|" + DefaultUserAgent(), "|" + DefaultUserAgent()}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("headers %q, want %q", got, want)
	}
}

func TestTokenFileRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	writeFile(t, path, "first\n")
	var seen []string
	var mu sync.Mutex
	c, err := New(&Config{Host: "http://api", BearerTokenFile: path, AllowCredentialsOverHTTP: true, QPS: -1, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") == "Bearer old1" {
			http.Error(w, "expired", 401)
			return
		}
		writeJSON(w, 200, map[string]any{})
	})})
	if err != nil {
		t.Fatal(err)
	}
	do := func() error { _, err := c.Do(context.Background(), Request{Path: "/api"}); return err }
	if err := do(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "second-rotated") // a changed file is picked up at once
	if err := do(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "old1")
	if err := do(); err == nil || !meta.IsUnauthorized(err) {
		t.Fatalf("rejected token: %v", err)
	}
	// Same size and modification time: only the 401 makes the client re-read the file.
	fi, _ := os.Stat(path)
	writeFile(t, path, "new1")
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	if err := do(); err != nil {
		t.Fatalf("after 401 with a rotated file: %v", err)
	}
	want := []string{"Bearer first", "Bearer second-rotated", "Bearer old1", "Bearer old1", "Bearer new1"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("tokens sent %q, want %q", seen, want)
	}
	if _, err := New(&Config{Host: "http://api", BearerTokenFile: filepath.Join(t.TempDir(), "nope"), AllowCredentialsOverHTTP: true}); err == nil {
		t.Fatal("missing token file accepted")
	}
}

// execScript writes a credential plugin that counts its runs, records
// KUBERNETES_EXEC_INFO and prints token tok-<run> with the given expiry.
func execScript(t *testing.T, expiry string) (script, dir string) {
	t.Helper()
	dir = t.TempDir()
	script = filepath.Join(dir, "plugin.sh")
	status := `{"token":"tok-'"$n"'"}`
	if expiry != "" {
		status = `{"token":"tok-'"$n"'","expirationTimestamp":"` + expiry + `"}`
	}
	writeFile(t, script, `#!/bin/sh
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$COUNTER"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO"
echo "$1 $PLUGIN_ENV" > "$ARGS"
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":`+status+`}'
`)
	os.Chmod(script, 0o755)
	return script, dir
}

func execConfig(script, dir string) *ExecConfig {
	return &ExecConfig{Command: script, Args: []string{"arg1"}, APIVersion: execAPIV1, Env: []ExecEnvVar{
		{Name: "COUNTER", Value: filepath.Join(dir, "count")},
		{Name: "INFO", Value: filepath.Join(dir, "info")},
		{Name: "ARGS", Value: filepath.Join(dir, "args")},
		{Name: "PLUGIN_ENV", Value: "from-env"},
	}}
}

func TestExecPluginCachingAndRerunOn401(t *testing.T) {
	script, dir := execScript(t, "2999-01-01T00:00:00Z")
	var seen []string
	var mu sync.Mutex
	reject := "Bearer tok-2"
	cfg := &Config{Host: "https://api.example", QPS: -1, Exec: execConfig(script, dir), WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") == reject {
			http.Error(w, "Unauthorized", 401)
			return
		}
		writeJSON(w, 200, map[string]any{})
	})}
	cfg.Exec.ProvideClusterInfo = true
	cfg.Exec.ClusterConfig = []byte(`{"audience":"fleet"}`)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.Do(context.Background(), Request{Path: "/api"}); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(seen) != "[Bearer tok-1 Bearer tok-1 Bearer tok-1]" {
		t.Fatalf("cached credential not reused: %q", seen)
	}
	info, _ := os.ReadFile(filepath.Join(dir, "info"))
	if !strings.Contains(string(info), `"kind":"ExecCredential"`) || !strings.Contains(string(info), `"interactive":false`) ||
		!strings.Contains(string(info), `"server":"https://api.example"`) || !strings.Contains(string(info), `"config":{"audience":"fleet"}`) {
		t.Errorf("KUBERNETES_EXEC_INFO = %s", info)
	}
	if args, _ := os.ReadFile(filepath.Join(dir, "args")); strings.TrimSpace(string(args)) != "arg1 from-env" {
		t.Errorf("args/env = %q", args)
	}
	// A 401 drops the cached token and runs the plugin again (tok-2 is rejected too, so
	// the next run's tok-3 is used on the retried request)... but only one retry happens.
	c.auth.exec.invalidate(c.auth.exec.cred)
	seen = nil
	_, err = c.Do(context.Background(), Request{Path: "/api"})
	if err != nil {
		t.Fatalf("after 401: %v", err)
	}
	if fmt.Sprint(seen) != "[Bearer tok-2 Bearer tok-3]" {
		t.Fatalf("tokens sent %q", seen)
	}
}

func TestExecPluginExpiry(t *testing.T) {
	script, dir := execScript(t, "2000-01-01T00:00:00Z") // always expired: every request runs it
	var seen []string
	c, err := New(&Config{Host: "http://api", QPS: -1, Exec: execConfig(script, dir), AllowCredentialsOverHTTP: true, WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		writeJSON(w, 200, map[string]any{})
	})})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.Do(context.Background(), Request{Path: "/api"}); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(seen) != "[Bearer tok-1 Bearer tok-2]" {
		t.Fatalf("expired credential reused: %q", seen)
	}
}

func TestExecPluginErrorsDoNotLeak(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, filepath.Join(dir, "bad.sh"), "#!/bin/sh\necho '{\"token\": \"leaked-SECRET\", broken'\n")
	fail := writeFile(t, filepath.Join(dir, "fail.sh"), "#!/bin/sh\necho 'cannot reach the identity provider' >&2\nexit 3\n")
	wrong := writeFile(t, filepath.Join(dir, "wrong.sh"), "#!/bin/sh\necho '{\"apiVersion\":\"v9\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"leaked-SECRET\"}}'\n")
	for _, f := range []string{bad, fail, wrong} {
		os.Chmod(f, 0o755)
	}
	for _, tc := range []struct{ script, want string }{
		{bad, "not an ExecCredential"},
		{fail, "exit status 3: cannot reach the identity provider"},
		{wrong, `apiVersion "v9"`},
	} {
		c, err := New(&Config{Host: "https://api", QPS: -1, MaxRetries: -1, Exec: &ExecConfig{Command: tc.script}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), Request{Path: "/api"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: err = %v", filepath.Base(tc.script), err)
		}
	}
	if _, err := New(&Config{Host: "http://api", Exec: &ExecConfig{Command: "x", InteractiveMode: "Always"}}); err == nil {
		t.Error("interactive plugin accepted")
	}
}

func TestExecPluginClientCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client cert", 401)
			return
		}
		writeJSON(w, 200, map[string]any{})
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	// The server's own certificate and key serve as the client's.
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	der, err := x509.MarshalPKCS8PrivateKey(srv.TLS.Certificates[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	dir := t.TempDir()
	script := writeFile(t, filepath.Join(dir, "cert.sh"), fmt.Sprintf("#!/bin/sh\ncat <<'EOF'\n{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":%q,\"clientKeyData\":%q}}\nEOF\n",
		string(certPEM), string(keyPEM)))
	os.Chmod(script, 0o755)
	c, err := New(&Config{Host: srv.URL, TLS: TLSConfig{CAData: certPEM}, Exec: &ExecConfig{Command: script}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(context.Background(), Request{Path: "/api"}); err != nil {
		t.Fatalf("exec client certificate: %v", err)
	}
}
