package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// What kube-apiserver 1.37 compresses, and how, compared with apitest: the threshold of
// APIResponseCompression (a body over 128 KiB), the streaming lists of WatchListCompression
// (one gzip member per flush), and what is never compressed (other watches, WebSocket).

// rawTarget sends requests to one server with a transport that leaves bodies as sent.
type rawTarget struct {
	name, url, token string
	ca               []byte
	client           *http.Client
}

func newRawTarget(t *testing.T, name, url, token string, ca []byte) *rawTarget {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tr := &http.Transport{DisableCompression: true, ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &rawTarget{name: name, url: url, token: token, ca: ca, client: &http.Client{Transport: tr}}
}

func (r *rawTarget) send(t *testing.T, ctx context.Context, method, path, accept string, gz bool, body string) *http.Response {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, rb)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", r.name, method, path, err)
	}
	return resp
}

// unzip returns b decompressed when enc is gzip.
func unzip(t *testing.T, b []byte, enc string) []byte {
	t.Helper()
	if enc != "gzip" {
		return b
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compressionTranscript runs the probes against one server and returns what it saw, one
// line per answer.
func compressionTranscript(t *testing.T, r *rawTarget, ns string) []string {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	call := func(method, path, accept string, gz bool, body string) (int, string, []byte) {
		resp := r.send(t, ctx, method, path, accept, gz, body)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		enc := resp.Header.Get("Content-Encoding")
		if enc == "gzip" && resp.Header.Get("Vary") != "Accept-Encoding" {
			logf("gzip without Vary: Accept-Encoding (%q)", resp.Header.Get("Vary"))
		}
		return resp.StatusCode, enc, unzip(t, b, enc)
	}
	if code, _, b := call("POST", "/api/v1/namespaces", "", false, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`); code != http.StatusCreated {
		t.Fatalf("%s: namespace: %d %s", r.name, code, b)
	}
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	cmJSON := func(name string, size int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"` + strings.Repeat("x", size) + `"}}`
	}

	// The threshold: a GET whose body is exactly 128 KiB, then 128 KiB + 1, in each format.
	for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		name := map[string]string{"application/json": "t-json"}[accept]
		if name == "" {
			name = "t-protobuf"
		}
		call("POST", cms, "", false, cmJSON(name, 100_000))
		_, _, b := call("GET", cms+"/"+name, accept, false, "")
		size := 100_000 + 128<<10 - len(b)
		for _, extra := range []int{0, 1} {
			// Until the body is the size asked: a resourceVersion that gains a digit
			// (apitest's small ones) makes it a byte longer.
			for range 3 {
				call("PUT", cms+"/"+name, "", false, cmJSON(name, size+extra))
				_, _, plain := call("GET", cms+"/"+name, accept, false, "")
				if d := 128<<10 + extra - len(plain); d != 0 {
					size += d
					continue
				}
				break
			}
			code, enc, b := call("GET", cms+"/"+name, accept, true, "")
			logf("GET %s body 128KiB%+d: %d Content-Encoding=%q (read %d bytes)", accept, extra, code, enc, len(b)-128<<10)
			code, enc, _ = call("GET", cms+"/"+name, accept, false, "")
			logf("GET %s body 128KiB%+d without Accept-Encoding: %d Content-Encoding=%q", accept, extra, code, enc)
		}
		call("DELETE", cms+"/"+name, "", false, "")
	}

	// A list of 200 objects of 1 KB: gzipped in every representation.
	for i := range 200 {
		if code, _, b := call("POST", cms, "", false, cmJSON(fmt.Sprintf("l-%03d", i), 1000)); code != http.StatusCreated {
			t.Fatalf("%s: create: %d %s", r.name, code, b)
		}
	}
	for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"} {
		code, enc, b := call("GET", cms, accept, true, "")
		logf("LIST %s: %d Content-Encoding=%q, %d names", accept, code, enc, bytes.Count(b, []byte("l-")))
	}
	code, enc, _ := call("GET", cms+"?limit=10", "application/json", true, "")
	logf("LIST limit=10: %d Content-Encoding=%q", code, enc)

	// Watches over chunked HTTP/2.
	watch := cms + "?watch=true&timeoutSeconds=30"
	list := watch + "&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
	for _, w := range []struct {
		name, path, accept string
		gz                 bool
	}{
		{"streaming list", list, "application/json", true},
		{"streaming list, protobuf", list, acceptPB, true},
		{"streaming list, not asked", list, "application/json", false},
		{"watch with bookmarks", watch + "&allowWatchBookmarks=true&resourceVersion=0", "application/json", true},
	} {
		resp := r.send(t, ctx, "GET", w.path, w.accept, w.gz, "")
		enc := resp.Header.Get("Content-Encoding")
		logf("WATCH %s: %d Content-Encoding=%q Content-Type=%q", w.name, resp.StatusCode, enc, resp.Header.Get("Content-Type"))
		if enc == "gzip" {
			logf("  %s", readMembers(t, r, ctx, resp.Body, cms))
		}
		resp.Body.Close()
	}
	resp := r.send(t, ctx, "GET", watch+"&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "application/json", true, "")
	logf("WATCH sendInitialEvents without bookmarks: %d Content-Encoding=%q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	resp.Body.Close()

	// A streaming list over WebSocket, gzip asked: text messages of plain JSON.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.ca)
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.DialContext(ctx, "wss"+strings.TrimPrefix(r.url, "https")+list,
		http.Header{"Origin": {r.url}, "Authorization": {"Bearer " + r.token}, "Accept-Encoding": {"gzip"}})
	if err != nil {
		var detail []byte
		if resp != nil {
			detail, _ = io.ReadAll(resp.Body)
			detail = fmt.Appendf(nil, "%d %s", resp.StatusCode, detail)
		}
		t.Fatalf("%s: websocket: %v: %s", r.name, err, detail)
	}
	logf("WEBSOCKET streaming list: %d Content-Encoding=%q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	mt, msg, err := conn.ReadMessage()
	logf("  first message: type %d, JSON %v, %v", mt, bytes.HasPrefix(msg, []byte(`{"type":"ADDED"`)), err)
	conn.Close()
	return lines
}

// readMembers reads a gzipped streaming list member by member up to the initial-events-end
// bookmark (how the server cuts the initial events into members varies with its timing),
// then creates an object and reads the next member: it must hold that event, whole.
func readMembers(t *testing.T, r *rawTarget, ctx context.Context, body io.Reader, cms string) string {
	br := bufio.NewReader(body)
	zr := new(gzip.Reader)
	member := func() []byte {
		if err := zr.Reset(br); err != nil {
			t.Fatalf("%s: a gzip member's header: %v", r.name, err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: a gzip member: %v", r.name, err)
		}
		return b
	}
	var initial []byte
	for !bytes.Contains(initial, []byte("initial-events-end")) {
		initial = append(initial, member()...)
	}
	events := splitEvents(initial)
	endsIt := bytes.Contains(events[len(events)-1], []byte("initial-events-end"))
	name := fmt.Sprintf("late-%d", time.Now().UnixNano())
	resp := r.send(t, ctx, "POST", cms, "", false, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"}}`)
	resp.Body.Close()
	next := member()
	return fmt.Sprintf("%d events, the end bookmark ends a member: %v; the next member holds the new event: %v",
		len(events), endsIt, bytes.Contains(next, []byte(name)))
}

// splitEvents splits a watch stream into its events: 4-byte length-prefixed protobuf frames,
// or JSON lines.
func splitEvents(b []byte) [][]byte {
	var out [][]byte
	if len(b) > 4 && b[0] == 0 {
		for len(b) >= 4 {
			n := int(binary.BigEndian.Uint32(b))
			out = append(out, b[4:min(4+n, len(b))])
			b = b[min(4+n, len(b)):]
		}
		return out
	}
	for line := range bytes.Lines(b) {
		out = append(out, line)
	}
	return out
}

// roundTripperFunc is a func as an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCompressionFidelity(t *testing.T) {
	c := cluster.ForTest(t)
	if c.Minor() < 37 {
		t.Skipf("kube-apiserver %s: gzip of streaming lists is new in 1.37", c.Version)
	}
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "compression", KubernetesVersion: c.Version})
	defer s.Close()
	ns := newNamespace(t, c) + "-gz"
	want := compressionTranscript(t, newRawTarget(t, "kube-apiserver", c.URL, c.Token, c.CAPEM), ns)
	got := compressionTranscript(t, newRawTarget(t, "apitest", s.URL, s.Token(), s.CAPEM()), ns)
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("line %d differs:\n  kube-apiserver: %s\n  apitest:        %s", i+1, w, g)
		}
	}
	t.Logf("kube-apiserver:\n%s", strings.Join(want, "\n"))
}

// TestGzipStreamingListsOnKubeAPIServer reads a streaming list through apiclient with gzip
// asked over chunked HTTP/2 (and, for comparison, not asked), then an event after it. 1.36
// gzips the list, not the streaming list.
func TestGzipStreamingListsOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	for i := range 300 {
		do(t, c, http.MethodPost, nsPath(ns, "configmaps"), configMap(fmt.Sprintf("cm-%03d", i), map[string]string{"k": strings.Repeat("v", 1000)}), http.StatusCreated, nil)
	}
	for _, comp := range []apiclient.Compression{apiclient.CompressionGzip, apiclient.CompressionNone} {
		cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
		if err != nil {
			t.Fatal(err)
		}
		var enc []string
		cfg.Compression, cfg.WatchProtocol = comp, apiclient.WatchChunked
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := rt.RoundTrip(r)
				if err == nil && r.Method == http.MethodGet {
					enc = append(enc, resp.Header.Get("Content-Encoding"))
				}
				return resp, err
			})
		}
		cl, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cms := apiclient.NewResource[*testobj.ConfigMap](cl, testobj.ConfigMapGVR).Namespace(ns)
		l, err := cms.List(ctx, apiclient.ListOptions{})
		if err != nil || len(l.Items) < 300 {
			t.Fatalf("compression %d: list: %v items, %v", comp, len(l.Items), err)
		}
		send := true
		w, err := cms.Watch(ctx, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan})
		if err != nil {
			t.Fatal(err)
		}
		added := 0
		for done := false; !done; {
			ev, ok := <-w.ResultChan()
			switch {
			case !ok:
				t.Fatalf("compression %d: the watch ended after %d events: %v", comp, added, w.(interface{ Err() error }).Err())
			case ev.Type == apiclient.Added:
				added++
			case ev.Type == apiclient.Bookmark:
				done = ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true"
			default:
				t.Fatalf("compression %d: event %s %v", comp, ev.Type, ev.Err)
			}
		}
		name := fmt.Sprintf("late-%d", comp)
		do(t, c, http.MethodPost, nsPath(ns, "configmaps"), configMap(name, nil), http.StatusCreated, nil)
		found := false
		for ev := range w.ResultChan() {
			if found = ev.Type == apiclient.Added && ev.Object.Name == name; found {
				break
			}
			if ev.Type != apiclient.Bookmark {
				t.Fatalf("compression %d: event %s %v, want ADDED %s", comp, ev.Type, ev.Err, name)
			}
		}
		if !found {
			t.Fatalf("compression %d: the watch ended before the new object's event: %v", comp, w.(interface{ Err() error }).Err())
		}
		w.Stop()
		cancel()
		cl.Close()
		gz := map[bool]string{true: "gzip"}[comp == apiclient.CompressionGzip]
		gzWatch := map[bool]string{true: gz}[c.Minor() >= 37]
		if len(enc) != 2 || enc[0] != gz || enc[1] != gzWatch {
			t.Errorf("compression %d: Content-Encoding of the list and the streaming list %q, want %q, %q", comp, enc, gz, gzWatch)
		}
		t.Logf("compression %d: %d initial events, then the new one; Content-Encoding %q", comp, added, enc)
	}
}
