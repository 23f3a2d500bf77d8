package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/internal/kubecbor"
)

const cborCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"cborprobes.cbor.example.com"},
"spec":{"group":"cbor.example.com","scope":"Namespaced","names":{"plural":"cborprobes","singular":"cborprobe","kind":"CborProbe","listKind":"CborProbeList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

const cborProbes = "/apis/cbor.example.com/v1/namespaces/default/cborprobes"

// cborAnswer is what a server answered one request.
type cborAnswer struct {
	code int
	ct   string
	body []byte
}

func cborDo(t *testing.T, ctx context.Context, h *http.Client, base, method, path, accept, body string) cborAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return cborAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), b}
}

// cborSetup creates the CRD and one object, and waits until the resource is served.
func cborSetup(t *testing.T, h *http.Client, base string) {
	ctx := t.Context()
	if a := cborDo(t, ctx, h, base, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", cborCRD); a.code != 201 {
		t.Fatalf("CRD: %d %s", a.code, a.body)
	}
	obj := `{"apiVersion":"cbor.example.com/v1","kind":"CborProbe","metadata":{"name":"c1","labels":{"a":"b"}},"spec":{"n":1,"f":1.5,"s":"x","b":true,"z":null,"l":[1,-2,300000],"big":1e300}}`
	for {
		a := cborDo(t, ctx, h, base, "POST", cborProbes, "", obj)
		if a.code == 201 {
			return
		}
		if a.code != 404 {
			t.Fatalf("create: %d %s", a.code, a.body)
		}
		select { // the CRD is being established: poll its resource, not a timer of its own
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func generic(t *testing.T, js []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// cborFacts checks one server with CBOR served: GET, LIST and WATCH in CBOR, each equal to
// the JSON answer once transcoded.
func cborFacts(t *testing.T, name string, h *http.Client, base string) {
	ctx := t.Context()
	for _, path := range []string{cborProbes + "/c1", cborProbes} {
		c := cborDo(t, ctx, h, base, "GET", path, "application/cbor", "")
		j := cborDo(t, ctx, h, base, "GET", path, "application/json", "")
		if c.code != 200 || c.ct != "application/cbor" || !bytes.HasPrefix(c.body, kubecbor.SelfDescribed) {
			t.Fatalf("%s GET %s: %d %q % x", name, path, c.code, c.ct, c.body[:min(len(c.body), 8)])
		}
		if !bytes.Contains(c.body, []byte("\x44kind")) {
			t.Errorf("%s GET %s: member names are not byte strings", name, path)
		}
		js, err := kubecbor.ToJSON(nil, c.body)
		if err != nil {
			t.Fatalf("%s GET %s: %v", name, path, err)
		}
		if g, w := generic(t, js), generic(t, j.body); !reflect.DeepEqual(g, w) {
			t.Errorf("%s GET %s: CBOR reads as\n%s\nJSON is\n%s", name, path, js, j.body)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(wctx, "GET", base+cborProbes+"?watch=1&resourceVersion=0", nil)
	req.Header.Set("Accept", "application/cbor")
	resp, err := h.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/cbor-seq" {
		t.Fatalf("%s watch Content-Type %q", name, ct)
	}
	var buf []byte
	chunk := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if l, lerr := kubecbor.ItemLen(buf); lerr == nil {
			var ev struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := kubecbor.Unmarshal(buf[:l], &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Type != "ADDED" || ev.Object["kind"] != "CborProbe" || !bytes.HasPrefix(buf, kubecbor.SelfDescribed) {
				t.Fatalf("%s first watch event %+v", name, ev)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s watch: %v", name, err)
		}
	}
}

// TestCBORFidelity compares apitest's CBOR with a kube-apiserver v1.37 started with
// CBORServingAndStorage=true: the same media types and framing, and CBOR that reads as the
// JSON answer; and with the gate off (the package's cluster, apitest's default), 406.
func TestCBORFidelity(t *testing.T) {
	pkg := cluster.ForTest(t)
	if pkg.Minor() < 37 {
		t.Skipf("kube-apiserver %s: CBOR serving is checked against 1.37", pkg.Version)
	}
	kas, err := cluster.Start(t.Context(), cluster.Options{ExtraAPIServerArgs: []string{"--feature-gates=CBORServingAndStorage=true"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kas.Stop(); _ = kas.Cleanup() })
	fake, err := apitest.Start(apitest.Options{CBOR: true, KubernetesVersion: "v1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fc := fake.Client()
	defer fc.CloseIdleConnections()
	cborSetup(t, kas.HTTPClient(), kas.URL)
	cborSetup(t, fc, fake.URL)
	cborFacts(t, "kube-apiserver", kas.HTTPClient(), kas.URL)
	cborFacts(t, "apitest", fc, fake.URL)

	off, err := apitest.Start(apitest.Options{KubernetesVersion: "v1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	oc := off.Client()
	defer oc.CloseIdleConnections()
	for name, s := range map[string]struct {
		h    *http.Client
		base string
	}{"kube-apiserver": {pkg.HTTPClient(), pkg.URL}, "apitest": {oc, off.URL}} {
		a := cborDo(t, t.Context(), s.h, s.base, "GET", "/api/v1/namespaces/default/configmaps", "application/cbor", "")
		if a.code != http.StatusNotAcceptable {
			t.Errorf("%s without the gate: %d, want 406", name, a.code)
		}
	}
}
