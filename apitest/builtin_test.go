package apitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kuberecord"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// TestEveryBuiltinKindInProtobufAndStrictJSON creates one stub of every stored built-in
// resource (testdata/kube-apiserver/stubs.json, the kube-apiserver's own) in protobuf, reads
// it back in protobuf and in JSON (the same object), and sends it in JSON with an unknown
// field: fieldValidation=Strict is a 400 "strict decoding error", the default a warning.
func TestEveryBuiltinKindInProtobufAndStrictJSON(t *testing.T) {
	rc := newRaw(t)
	stubs, err := kuberecord.ReadStubs("../testdata/kube-apiserver/stubs.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": stubs.Namespace}}); err != nil {
		t.Fatal(err)
	}
	served := map[string]kubeschema.Resource{}
	for _, r := range kubeschema.Resources() {
		served[r.Group+"/"+r.Version+"/"+r.Resource] = r
	}
	n := 0
	for _, st := range stubs.Stubs {
		r, ok := served[st.Key()]
		if !ok || !strings.Contains(strings.Join(r.Verbs, ","), "create") {
			continue
		}
		n++
		path := "/apis/" + r.Group + "/" + r.Version
		apiVersion := r.Group + "/" + r.Version
		if r.Group == "" {
			path, apiVersion = "/api/"+r.Version, r.Version
		}
		if r.Namespaced {
			path += "/namespaces/" + stubs.Namespace
		}
		path += "/" + r.Resource
		obj, _ := jsonobj.Decode(st.Object)
		obj["apiVersion"], obj["kind"] = apiVersion, r.Kind
		name := jsonobj.StrAt(obj, "metadata", "name")

		if r.Group == "apiextensions.k8s.io" {
			// CustomResourceDefinitions are served in JSON only, without strict decoding
			// (docs/apitest.md).
			continue
		}
		// Strict JSON: an unknown field is refused; by default it is dropped with a warning.
		bad := jsonobj.DeepCopy(obj)
		bad["bogusField"] = 1
		body, _ := json.Marshal(bad)
		resp, b := rc.do("POST", path+"?fieldValidation=Strict", "application/json", "application/json", body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `strict decoding error: `) || !strings.Contains(string(b), `unknown field \"bogusField\"`) {
			t.Errorf("%s strict: %d %s", st.Key(), resp.StatusCode, b)
		}
		// Protobuf in, protobuf and JSON out.
		resp, b = rc.do("POST", path, acceptProto, pbType, mustProto(t, obj))
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Content-Type") != pbType {
			t.Errorf("%s protobuf create: %d %s %q", st.Key(), resp.StatusCode, resp.Header.Get("Content-Type"), b)
			continue
		}
		_, pb := rc.do("GET", path+"/"+name, acceptProto, "", nil)
		fromPB, err := kubeproto.DecodeObject(pb)
		if err != nil {
			t.Errorf("%s: decoding the protobuf answer: %v", st.Key(), err)
			continue
		}
		_, js := rc.do("GET", path+"/"+name, "application/json", "", nil)
		fromJSON, _ := jsonobj.Decode(js)
		if !jsonobj.Equal(fromPB, fromJSON) {
			t.Errorf("%s: protobuf and JSON differ:\n%v\n%v", st.Key(), fromPB, fromJSON)
		}
		if resp, _ := rc.do("DELETE", path+"/"+name, "application/json", "", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s delete: %d", st.Key(), resp.StatusCode)
		}
		// Warn (the default): created without the field, with a warning. (Another name:
		// the kinds that admission gives finalizers stay after the delete, as on the
		// kube-apiserver without its controllers.)
		if ip := strings.Count(name, "."); ip == 3 || r.Group == "apiregistration.k8s.io" {
			continue // named by their content (an address, version.group)
		}
		jsonobj.Meta(bad)["name"] = name + "-w"
		body, _ = json.Marshal(bad)
		resp, b = rc.do("POST", path, "application/json", "application/json", body)
		warnings := strings.Join(resp.Header.Values("Warning"), "\n")
		if resp.StatusCode != http.StatusCreated || !strings.Contains(warnings, `unknown field \"bogusField\"`) || strings.Contains(string(b), "bogusField") {
			t.Errorf("%s warn: %d %q %s", st.Key(), resp.StatusCode, warnings, b)
		}
	}
	if n < 55 {
		t.Errorf("only %d stubs of served resources", n)
	}
}

// TestHorizontalPodAutoscalerVersions: horizontalpodautoscalers are served at
// autoscaling/v2 (stored) and v1, converted: v1's CPU target is v2's cpu metric, in JSON and
// in protobuf, for objects and lists.
func TestHorizontalPodAutoscalerVersions(t *testing.T) {
	rc := newRaw(t)
	hpa := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
		"spec":{"maxReplicas":5,"targetCPUUtilizationPercentage":50,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`
	resp, b := rc.do("POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", "application/json", "application/json", []byte(hpa))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(b), `"apiVersion":"autoscaling/v1"`) ||
		!strings.Contains(string(b), `"targetCPUUtilizationPercentage":50`) || !strings.Contains(string(b), `"minReplicas":1`) {
		t.Fatalf("create at v1: %d %s", resp.StatusCode, b)
	}
	_, b = rc.do("GET", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web", "application/json", "", nil)
	if !strings.Contains(string(b), `"metrics":[{"resource":{"name":"cpu","target":{"averageUtilization":50,"type":"Utilization"}},"type":"Resource"}]`) {
		t.Errorf("read at v2: %s", b)
	}
	for _, path := range []string{"/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"} {
		_, pb := rc.do("GET", path, acceptProto, "", nil)
		got, err := kubeproto.DecodeObject(pb)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if items, ok := got["items"].([]any); ok {
			got = items[0].(map[string]any)
		}
		if spec := got["spec"].(map[string]any); spec["targetCPUUtilizationPercentage"] == nil || spec["metrics"] != nil {
			t.Errorf("%s in protobuf: %v", path, got)
		}
	}
	_, b = rc.do("GET", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", "application/json", "", nil)
	if !strings.Contains(string(b), `"apiVersion":"autoscaling/v1"`) || !strings.Contains(string(b), `"targetCPUUtilizationPercentage":50`) || strings.Contains(string(b), `"metrics":[`) {
		t.Errorf("list at v1: %s", b)
	}
}
