package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// These helpers talk to kube-apiserver with plain net/http (cluster.HTTPClient) so that the
// harness is proven independently of informerkit's apiclient. Tests of apiclient itself use
// apiclient.

// kubectl runs kubectl against the cluster and returns its stdout. It skips the test if
// kubectl is not installed (CI machines may have only Go).
func kubectl(t *testing.T, c *cluster.Cluster, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not found in PATH")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", c.KubeconfigPath}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// object is the part of a Kubernetes object that the harness tests read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	// Status fields, set when Kind is "Status".
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// event is one watch event.
type event struct {
	Type   string `json:"type"`
	Object object `json:"object"`
}

// do sends a request with a JSON body (nil for none) and decodes a JSON answer into out
// (nil to discard). It fails the test unless the status is wantStatus.
func do(t *testing.T, c *cluster.Cluster, method, path string, body any, wantStatus int, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: got %s, want %d: %s", method, path, resp.Status, wantStatus, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
}

// newNamespace creates a namespace with a random name for one test. Namespaces are not
// deleted: no kube-controller-manager runs, so deletion would never finish, and the cluster
// is thrown away at the end anyway.
func newNamespace(t *testing.T, c *cluster.Cluster) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "e2e-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-") + "-" + hex.EncodeToString(b)
	do(t, c, http.MethodPost, "/api/v1/namespaces",
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}},
		http.StatusCreated, nil)
	return name
}

// watchStream is an open watch: a decoded event stream.
type watchStream struct {
	resp   *http.Response
	events chan event
	errc   chan error
}

// openWatch GETs path (which must ask for a watch) and decodes events in the background
// until the server closes the stream or the test ends. A non-200 answer is returned as its
// decoded Status (w is then nil).
func openWatch(t *testing.T, c *cluster.Cluster, path string) (w *watchStream, status *object) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var s object
		if err := json.Unmarshal(data, &s); err != nil || s.Kind != "Status" {
			t.Fatalf("GET %s: %s: %s", path, resp.Status, data)
		}
		return nil, &s
	}
	w = &watchStream{resp: resp, events: make(chan event), errc: make(chan error, 1)}
	go func() {
		defer close(w.events)
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var e event
			if err := dec.Decode(&e); err != nil {
				if err != io.EOF {
					w.errc <- err
				}
				return
			}
			select {
			case w.events <- e:
			case <-t.Context().Done():
				return
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return w, nil
}

// next returns the next event, failing the test if none arrives within timeout or the
// stream ends.
func (w *watchStream) next(t *testing.T, timeout time.Duration) event {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case e, ok := <-w.events:
		if !ok {
			select {
			case err := <-w.errc:
				t.Fatalf("watch stream failed: %v", err)
			default:
				t.Fatal("watch stream closed by the server")
			}
		}
		return e
	case <-timer.C:
		t.Fatalf("no watch event within %v", timeout)
	}
	panic("unreachable")
}

// configMap returns a ConfigMap manifest.
func configMap(name string, data map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name}, "data": data}
}

// podTemplate returns a PodTemplate manifest (cluster.UncachedResource).
func podTemplate(name string, labels map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "PodTemplate",
		"metadata": map[string]any{"name": name},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10"},
			}},
		}}
}

func nsPath(ns, resource string) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/%s", ns, resource)
}
