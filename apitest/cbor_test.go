package apitest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubecbor"
)

type cborProbe struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		N int     `json:"n"`
		F float64 `json:"f"`
	} `json:"spec"`
}

const probes = "/apis/probe.example.com/v1/namespaces/default/probes"

func cborServer(t *testing.T, on bool) (*apitest.Server, *http.Client) {
	t.Helper()
	s := apitest.NewServerWithOptions(apitest.Options{CBOR: on})
	t.Cleanup(s.Close)
	if err := s.AddCRD([]byte(probeCRD("v1"))); err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	t.Cleanup(c.CloseIdleConnections)
	if code, _, body := httpDo(t, s, c, "POST", probes, `{"apiVersion":"probe.example.com/v1","kind":"Probe","metadata":{"name":"p1"},"spec":{"n":3,"f":1.5}}`, ""); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	return s, c
}

func cborGet(t *testing.T, s *apitest.Server, c *http.Client, path, accept string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+path, nil)
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// TestCBORServed: with Options.CBOR a custom resource is served as application/cbor
// (GET, LIST) as kube-apiserver 1.37.2 serves it with CBORServingAndStorage=true: the
// self-described tag first, strings as byte strings (see internal/kubecbor's testdata,
// recorded from one).
func TestCBORServed(t *testing.T) {
	s, c := cborServer(t, true)
	code, ct, b := cborGet(t, s, c, probes+"/p1", "application/cbor")
	if code != 200 || ct != "application/cbor" || !bytes.HasPrefix(b, kubecbor.SelfDescribed) {
		t.Fatalf("GET: %d %q % x", code, ct, b[:min(len(b), 8)])
	}
	var p cborProbe
	if err := kubecbor.Unmarshal(b, &p); err != nil || p.Metadata.Name != "p1" || p.Spec.N != 3 || p.Spec.F != 1.5 {
		t.Fatalf("GET decoded %+v, %v", p, err)
	}
	if !bytes.Contains(b, []byte("\x44kind\x45Probe")) {
		t.Fatalf("strings are not byte strings: % x", b)
	}
	code, ct, b = cborGet(t, s, c, probes, "application/cbor")
	var l struct {
		Kind  string      `json:"kind"`
		Items []cborProbe `json:"items"`
	}
	if err := kubecbor.Unmarshal(b, &l); code != 200 || ct != "application/cbor" || err != nil || l.Kind != "ProbeList" || len(l.Items) != 1 {
		t.Fatalf("LIST: %d %q %+v %v", code, ct, l, err)
	}
}

// TestCBORWatch: a watch asked for in CBOR is a CBOR sequence (application/cbor-seq) of
// self-described events.
func TestCBORWatch(t *testing.T) {
	s, c := cborServer(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+probes+"?watch=1&resourceVersion=0", nil)
	req.Header.Set("Accept", "application/cbor")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/cbor-seq" {
		t.Fatalf("Content-Type %q", ct)
	}
	if code, _, body := httpDo(t, s, c, "POST", probes, `{"apiVersion":"probe.example.com/v1","kind":"Probe","metadata":{"name":"p2"}}`, ""); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var buf []byte
	var got []string
	chunk := make([]byte, 4096)
	for len(got) < 2 {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			l, lerr := kubecbor.ItemLen(buf)
			if lerr != nil {
				break
			}
			var ev struct {
				Type   string    `json:"type"`
				Object cborProbe `json:"object"`
			}
			if !bytes.HasPrefix(buf, kubecbor.SelfDescribed) {
				t.Fatalf("event without the self-described tag: % x", buf[:min(len(buf), 8)])
			}
			if err := kubecbor.Unmarshal(buf[:l], &ev); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Type+" "+ev.Object.Metadata.Name)
			buf = buf[l:]
		}
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
	}
	if strings.Join(got, ",") != "ADDED p1,ADDED p2" {
		t.Fatalf("events %q", got)
	}
}

// TestCBORNotServed: without the gate, Accept: application/cbor alone is refused (406)
// and a JSON alternative is taken, as kube-apiserver 1.37.2 does.
func TestCBORNotServed(t *testing.T) {
	s, c := cborServer(t, false)
	if code, _, _ := cborGet(t, s, c, probes+"/p1", "application/cbor"); code != http.StatusNotAcceptable {
		t.Fatalf("GET application/cbor: %d, want 406", code)
	}
	if code, ct, _ := cborGet(t, s, c, probes, "application/cbor, application/json"); code != 200 || ct != "application/json" {
		t.Fatalf("GET cbor, json: %d %q", code, ct)
	}
	if code, _, _ := cborGet(t, s, c, probes+"?watch=1", "application/cbor"); code != http.StatusNotAcceptable {
		t.Fatalf("watch application/cbor: %d, want 406", code)
	}
}
