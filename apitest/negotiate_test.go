package apitest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeproto"
)

const (
	acceptProto = "application/vnd.kubernetes.protobuf, application/json"
	pbType      = "application/vnd.kubernetes.protobuf"
)

type rawClient struct {
	t *testing.T
	s *apitest.Server
	c *http.Client
}

func newRaw(t *testing.T) *rawClient {
	s := apitest.NewServer()
	t.Cleanup(s.Close)
	c := s.Client()
	t.Cleanup(c.CloseIdleConnections)
	return &rawClient{t: t, s: s, c: c}
}

func (rc *rawClient) do(method, path, accept, ct string, body []byte) (*http.Response, []byte) {
	rc.t.Helper()
	req, err := http.NewRequest(method, rc.s.URL+path, bytes.NewReader(body))
	if err != nil {
		rc.t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := rc.c.Do(req)
	if err != nil {
		rc.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func mustProto(t *testing.T, obj map[string]any) []byte {
	t.Helper()
	b, err := kubeproto.EncodeObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProtobufBodiesAndResponses(t *testing.T) {
	rc := newRaw(t)
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "pb", "namespace": "default"}, "data": map[string]any{"k": "v"}}
	resp, body := rc.do("POST", "/api/v1/namespaces/default/configmaps", acceptProto, pbType, mustProto(t, cm))
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != pbType {
		t.Fatalf("create: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	got, err := kubeproto.DecodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	meta := got["metadata"].(map[string]any)
	if meta["name"] != "pb" || meta["uid"] == "" || got["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("created %v", got)
	}
	// JSON clients see the same object.
	resp, body = rc.do("GET", "/api/v1/namespaces/default/configmaps/pb", "application/json", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"k":"v"`) {
		t.Fatalf("get JSON: %d %s", resp.StatusCode, body)
	}
	// A list in protobuf: items without apiVersion/kind.
	resp, body = rc.do("GET", "/api/v1/namespaces/default/configmaps", acceptProto, "", nil)
	list, err := kubeproto.DecodeObject(body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %d %v", resp.StatusCode, err)
	}
	items := list["items"].([]any)
	if list["kind"] != "ConfigMapList" || len(items) != 1 || items[0].(map[string]any)["kind"] != nil {
		t.Fatalf("list %v", list)
	}
	// Errors come in the negotiated format too.
	resp, body = rc.do("GET", "/api/v1/namespaces/default/configmaps/missing", acceptProto, "", nil)
	st, err := kubeproto.DecodeObject(body)
	if resp.StatusCode != 404 || err != nil || st["reason"] != "NotFound" || st["kind"] != "Status" {
		t.Fatalf("404: %d %v %v", resp.StatusCode, st, err)
	}
	// DeleteOptions in protobuf, as client-go's typed clients send them.
	del := mustProto(t, map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": []any{"All"}})
	resp, _ = rc.do("DELETE", "/api/v1/namespaces/default/configmaps/pb", acceptProto, pbType, del)
	if resp.StatusCode != 200 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if _, err := rc.s.Get("configmaps", "default", "pb"); err != nil {
		t.Fatalf("a dry-run delete deleted: %v", err)
	}
}

func TestUnreadableBodyIs415(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, ct, want string }{
		{"/api/v1/namespaces/default/configmaps", "text/plain", "application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"/apis/example.com/v1/namespaces/default/widgets", pbType, "application/json, application/yaml"},
	}
	for _, c := range cases {
		resp, body := rc.do("POST", c.path, "application/json", c.ct, []byte("k8s\x00junk"))
		var st map[string]any
		json.Unmarshal(body, &st)
		msg := "the body of the request was in an unknown format - accepted media types include: " + c.want
		if resp.StatusCode != 415 || st["reason"] != "UnsupportedMediaType" || st["message"] != msg {
			t.Errorf("%s with %s: %d %s", c.path, c.ct, resp.StatusCode, body)
		}
	}
	// A YAML body is read.
	resp, body := rc.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", "application/yaml",
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  n: \"1\"\n"))
	if resp.StatusCode != 201 {
		t.Fatalf("YAML create: %d %s", resp.StatusCode, body)
	}
}

func TestAcceptNegotiation(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.s.Create("widgets.example.com", map[string]any{"metadata": map[string]any{"name": "w"}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, accept string
		code         int
		ct           string
	}{
		// Custom resources have no protobuf form: JSON, the next acceptable type.
		{"/apis/example.com/v1/namespaces/default/widgets/w", acceptProto, 200, "application/json"},
		{"/apis/example.com/v1/namespaces/default/widgets/w", pbType, 406, "application/json"},
		// ... except as PartialObjectMetadata.
		{"/apis/example.com/v1/namespaces/default/widgets/w", pbType + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1", 200, pbType},
		{"/api/v1/namespaces", "application/json;q=0.5, application/vnd.kubernetes.protobuf", 200, pbType},
		{"/api/v1/namespaces", "*/*", 200, "application/json"},
		{"/api/v1/namespaces", "application/yaml", 200, "application/yaml"},
		{"/api/v1/namespaces", "text/html", 406, "application/json"},
		// Tables have no protobuf form; as= needs g and v.
		{"/api/v1/namespaces", pbType + ";as=Table;g=meta.k8s.io;v=v1", 406, "application/json"},
		{"/api/v1/namespaces", "application/json;as=Table", 406, "application/json"},
		{"/api/v1/namespaces", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", 406, "application/json"},
		{"/api/v1/namespaces/default", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", 406, "application/json"},
	}
	for _, c := range cases {
		resp, body := rc.do("GET", c.path, c.accept, "", nil)
		if resp.StatusCode != c.code || resp.Header.Get("Content-Type") != c.ct {
			t.Errorf("GET %s Accept %q: %d %s, want %d %s (%.200s)", c.path, c.accept, resp.StatusCode, resp.Header.Get("Content-Type"), c.code, c.ct, body)
		}
	}
	resp, body := rc.do("GET", "/api/v1/namespaces", "text/html", "", nil)
	if resp.StatusCode != 406 || !strings.Contains(string(body), `Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch`) {
		t.Errorf("406 body %s", body)
	}
	resp, body = rc.do("GET", "/api/v1/namespaces", "application/json;as=Table", "", nil)
	if resp.StatusCode != 406 || !strings.Contains(string(body), `"message":"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"`) {
		t.Errorf("406 body %s", body)
	}
	// Built-in list items carry no apiVersion/kind in JSON either; custom ones do.
	_, body = rc.do("GET", "/api/v1/namespaces", "application/json", "", nil)
	if strings.Contains(string(body), `"kind":"Namespace"`) {
		t.Errorf("namespace list items carry kind: %.300s", body)
	}
	_, body = rc.do("GET", "/apis/example.com/v1/widgets", "application/json", "", nil)
	if !strings.Contains(string(body), `"kind":"Widget"`) {
		t.Errorf("widget list items lack kind: %.300s", body)
	}
}

// readPBFrames reads length-delimited protobuf watch events until n were read.
func readPBFrames(t *testing.T, r io.Reader, n int) []map[string]any {
	t.Helper()
	br := bufio.NewReader(r)
	var out []map[string]any
	for len(out) < n {
		var l [4]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		msg := make([]byte, binary.BigEndian.Uint32(l[:]))
		if _, err := io.ReadFull(br, msg); err != nil {
			t.Fatal(err)
		}
		typ, obj, err := kubeproto.ParseWatchEvent(msg)
		if err != nil {
			t.Fatal(err)
		}
		m, err := kubeproto.DecodeObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, map[string]any{"type": typ, "object": m})
	}
	return out
}

func TestProtobufAndMetadataWatches(t *testing.T) {
	rc := newRaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(accept string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", rc.s.URL+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0", nil)
		req.Header.Set("Accept", accept)
		resp, err := rc.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if _, err := rc.s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}}, "data": map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	full := open(acceptProto)
	meta := open(pbType + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
	metaJSON := open("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	if ct := full.Header.Get("Content-Type"); ct != pbType+";stream=watch" {
		t.Fatalf("watch content type %q", ct)
	}
	if _, err := rc.s.Mutate("configmaps", "default", "a", func(o apitest.Object) { o["data"] = map[string]any{"k": "w"} }); err != nil {
		t.Fatal(err)
	}
	evs := readPBFrames(t, full.Body, 2)
	if evs[0]["type"] != "ADDED" || evs[1]["type"] != "MODIFIED" {
		t.Fatalf("events %v", evs)
	}
	if o := evs[1]["object"].(map[string]any); o["kind"] != "ConfigMap" || o["data"].(map[string]any)["k"] != "w" {
		t.Fatalf("modified object %v", o)
	}
	mevs := readPBFrames(t, meta.Body, 2)
	for _, ev := range mevs {
		o := ev["object"].(map[string]any)
		if o["kind"] != "PartialObjectMetadata" || o["data"] != nil || o["metadata"].(map[string]any)["labels"] == nil {
			t.Fatalf("metadata event %v", ev)
		}
	}
	dec := json.NewDecoder(metaJSON.Body)
	for range 2 {
		var ev struct {
			Type   string
			Object map[string]any
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		if ev.Object["kind"] != "PartialObjectMetadata" || ev.Object["apiVersion"] != "meta.k8s.io/v1" || ev.Object["data"] != nil {
			t.Fatalf("JSON metadata event %v", ev)
		}
	}
}

func TestTableColumns(t *testing.T) {
	rc := newRaw(t)
	pod, err := rc.s.Create("pods", map[string]any{"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}})
	if err != nil {
		t.Fatal(err)
	}
	pod["status"] = map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{"name": "c", "ready": true, "restartCount": 2,
		"image": "nginx", "imageID": "", "state": map[string]any{"running": map[string]any{}}}}}
	if _, err := rc.s.UpdateStatus("pods", pod); err != nil {
		t.Fatal(err)
	}
	_, body := rc.do("GET", "/api/v1/namespaces/default/pods", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", "", nil)
	var tab struct {
		Kind              string
		ColumnDefinitions []struct{ Name string }
		Rows              []struct{ Cells []any }
	}
	if err := json.Unmarshal(body, &tab); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tab.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if tab.Kind != "Table" || strings.Join(names, ",") != "Name,Ready,Status,Restarts,Age,IP,Node,Nominated Node,Readiness Gates" {
		t.Fatalf("pod columns %v", names)
	}
	if len(tab.Rows) != 1 || tab.Rows[0].Cells[1] != "1/1" || tab.Rows[0].Cells[2] != "Running" || tab.Rows[0].Cells[3] != "2" {
		t.Fatalf("pod row %v", tab.Rows)
	}
}

// TestNodeBodiesAndStrictDecoding: Nodes are read and written in protobuf (as
// controller-runtime's client and client-go's typed clientset send them), and their JSON
// bodies are decoded strictly on request, as the kube-apiserver does.
func TestNodeBodiesAndStrictDecoding(t *testing.T) {
	rc := newRaw(t)
	node := map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "n1", "labels": map[string]any{"zone": "a"}},
		"spec":     map[string]any{"unschedulable": true, "podCIDR": "10.1.0.0/24"}}
	resp, body := rc.do("POST", "/api/v1/nodes", acceptProto, pbType, mustProto(t, node))
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != pbType {
		t.Fatalf("create: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	got, err := kubeproto.DecodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	if got["kind"] != "Node" || got["spec"].(map[string]any)["unschedulable"] != true {
		t.Fatalf("created %v", got)
	}
	// An update in protobuf, read back in JSON.
	got["spec"].(map[string]any)["unschedulable"] = false
	resp, body = rc.do("PUT", "/api/v1/nodes/n1", acceptProto, pbType, mustProto(t, got))
	if resp.StatusCode != 200 {
		t.Fatalf("update: %d %q", resp.StatusCode, body)
	}
	resp, body = rc.do("GET", "/api/v1/nodes/n1", "application/json", "", nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), "unschedulable") || !strings.Contains(string(body), `"podCIDR":"10.1.0.0/24"`) {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	// fieldValidation: Strict refuses an unknown field, Warn (the default) drops it with a
	// warning.
	bad := []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"},"spec":{"bogus":1}}`)
	resp, body = rc.do("POST", "/api/v1/nodes?fieldValidation=Strict", "application/json", "application/json", bad)
	var st map[string]any
	json.Unmarshal(body, &st)
	want := `Node in version "v1" cannot be handled as a Node: strict decoding error: unknown field "spec.bogus"`
	if resp.StatusCode != 400 || st["reason"] != "BadRequest" || st["message"] != want {
		t.Fatalf("strict: %d %s", resp.StatusCode, body)
	}
	resp, body = rc.do("POST", "/api/v1/nodes", "application/json", "application/json", bad)
	if resp.StatusCode != 201 || resp.Header.Get("Warning") != `299 - "unknown field \"spec.bogus\""` || strings.Contains(string(body), "bogus") {
		t.Fatalf("warn: %d %q %s", resp.StatusCode, resp.Header.Get("Warning"), body)
	}
}
