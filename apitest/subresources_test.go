package apitest_test

import (
	"encoding/json"
	"strings"
	"testing"
)

const podBody = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}`

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func TestScaleSubresource(t *testing.T) {
	rc := newRaw(t)
	dep := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},
		"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	if resp, b := rc.do("POST", "/apis/apps/v1/namespaces/default/deployments", "", "application/json", []byte(dep)); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	resp, b := rc.do("GET", "/apis/apps/v1/namespaces/default/deployments/d/scale", "", "", nil)
	sc := decodeMap(t, b)
	if resp.StatusCode != 200 || sc["kind"] != "Scale" || sc["apiVersion"] != "autoscaling/v1" ||
		sc["spec"].(map[string]any)["replicas"] != float64(1) || sc["status"].(map[string]any)["selector"] != "app=d" {
		t.Fatalf("scale: %d %s", resp.StatusCode, b)
	}
	resp, b = rc.do("PUT", "/apis/apps/v1/namespaces/default/deployments/d/scale", "", "application/json",
		[]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":3}}`))
	if resp.StatusCode != 200 {
		t.Fatalf("put scale: %d %s", resp.StatusCode, b)
	}
	resp, b = rc.do("PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale", "", "application/merge-patch+json", []byte(`{"spec":{"replicas":4}}`))
	if resp.StatusCode != 200 || decodeMap(t, b)["spec"].(map[string]any)["replicas"] != float64(4) {
		t.Fatalf("patch scale: %d %s", resp.StatusCode, b)
	}
	d, _ := rc.s.Get("deployments", "default", "d")
	if d["spec"].(map[string]any)["replicas"].(json.Number) != "4" || d.Generation() != 3 {
		t.Fatalf("deployment after scaling: %v generation %d", d["spec"].(map[string]any)["replicas"], d.Generation())
	}
	resp, b = rc.do("PUT", "/apis/apps/v1/namespaces/default/deployments/d/scale", "", "application/json",
		[]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":-1}}`))
	if resp.StatusCode != 422 || !strings.Contains(string(b), `Scale.autoscaling \"d\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`) {
		t.Fatalf("negative scale: %d %s", resp.StatusCode, b)
	}
	if resp, _ := rc.do("GET", "/api/v1/namespaces/default/pods/x/scale", "", "", nil); resp.StatusCode != 404 {
		t.Fatalf("pods/scale: %d", resp.StatusCode)
	}
}

func TestBindingAndEviction(t *testing.T) {
	rc := newRaw(t)
	if resp, b := rc.do("POST", "/api/v1/namespaces/default/pods", "", "application/json", []byte(podBody)); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}`
	resp, b := rc.do("POST", "/api/v1/namespaces/default/pods/p/binding", "", "application/json", []byte(bind))
	if resp.StatusCode != 201 || decodeMap(t, b)["status"] != "Success" {
		t.Fatalf("binding: %d %s", resp.StatusCode, b)
	}
	p, _ := rc.s.Get("pods", "default", "p")
	conds := p["status"].(map[string]any)["conditions"].([]any)
	if p["spec"].(map[string]any)["nodeName"] != "n1" || conds[0].(map[string]any)["type"] != "PodScheduled" || p.Generation() != 1 {
		t.Fatalf("bound pod %v", p)
	}
	resp, b = rc.do("POST", "/api/v1/namespaces/default/pods/p/binding", "", "application/json", []byte(bind))
	if resp.StatusCode != 409 || !strings.Contains(string(b), `Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"`) {
		t.Fatalf("second binding: %d %s", resp.StatusCode, b)
	}
	resp, b = rc.do("POST", "/api/v1/namespaces/default/pods/p/eviction", "", "application/json", []byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`))
	if resp.StatusCode != 201 {
		t.Fatalf("eviction: %d %s", resp.StatusCode, b)
	}
	if _, err := rc.s.Get("pods", "default", "p"); err == nil {
		t.Fatal("the evicted pod is still there")
	}
	resp, _ = rc.do("POST", "/api/v1/namespaces/default/pods/p/eviction", "", "application/json", []byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`))
	if resp.StatusCode != 404 {
		t.Fatalf("eviction of a missing pod: %d", resp.StatusCode)
	}
}

func TestAccessReviewsAndVerbs(t *testing.T) {
	rc := newRaw(t)
	resp, b := rc.do("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "application/json",
		[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"create","resource":"pods"}}}`))
	if resp.StatusCode != 201 || decodeMap(t, b)["status"].(map[string]any)["allowed"] != true {
		t.Fatalf("access review: %d %s", resp.StatusCode, b)
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"DELETE", "/api/v1/namespaces", 405}, // namespaces have no deletecollection
		{"GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", 405},
		{"DELETE", "/api/v1/namespaces/default/configmaps", 200},
		{"GET", "/apis/events.k8s.io/v1/namespaces/default/events", 200},
	} {
		if resp, b := rc.do(c.method, c.path, "", "", nil); resp.StatusCode != c.code {
			t.Errorf("%s %s: %d, want %d (%s)", c.method, c.path, resp.StatusCode, c.code, b)
		}
	}
}

func TestDefaultsAndValidation(t *testing.T) {
	rc := newRaw(t)
	resp, b := rc.do("POST", "/api/v1/namespaces/default/pods", "", "application/json", []byte(podBody))
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	pod := decodeMap(t, b)
	spec := pod["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	status := pod["status"].(map[string]any)
	if spec["restartPolicy"] != "Always" || spec["dnsPolicy"] != "ClusterFirst" || spec["terminationGracePeriodSeconds"] != float64(30) ||
		spec["enableServiceLinks"] != true || c["imagePullPolicy"] != "IfNotPresent" || c["terminationMessagePath"] != "/dev/termination-log" ||
		status["phase"] != "Pending" || status["qosClass"] != "BestEffort" || len(spec["tolerations"].([]any)) != 2 {
		t.Fatalf("pod defaults: %s", b)
	}
	cases := []struct{ body, want string }{
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e"},"spec":{}}`, `Pod \"e\" is invalid: spec.containers: Required value`},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e"},"spec":{"containers":[{"name":"c"}]}}`, `spec.containers[0].image: Required value`},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e"},"spec":{"containers":[{"name":"C","image":"x"}]}}`, `spec.containers[0].name: Invalid value: \"C\": a lowercase RFC 1123 label`},
	}
	for _, c := range cases {
		resp, b := rc.do("POST", "/api/v1/namespaces/default/pods", "", "application/json", []byte(c.body))
		if resp.StatusCode != 422 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s, want 422 with %s", c.body, resp.StatusCode, b, c.want)
		}
	}
	// Wrong JSON types are a 400; unknown fields are dropped with a warning, or refused
	// with fieldValidation=Strict.
	resp, b = rc.do("POST", "/api/v1/namespaces/default/configmaps", "", "application/json", []byte(`{"metadata":{"name":"x"},"data":{"k":1}}`))
	if resp.StatusCode != 400 {
		t.Errorf("number in data: %d %s", resp.StatusCode, b)
	}
	resp, b = rc.do("POST", "/api/v1/namespaces/default/configmaps", "", "application/json", []byte(`{"metadata":{"name":"x"},"colour":"red"}`))
	if resp.StatusCode != 201 || resp.Header.Get("Warning") != `299 - "unknown field \"colour\""` || strings.Contains(string(b), "colour") {
		t.Errorf("unknown field: %d %q %s", resp.StatusCode, resp.Header.Get("Warning"), b)
	}
	resp, b = rc.do("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", "", "application/json", []byte(`{"metadata":{"name":"y"},"colour":"red"}`))
	if resp.StatusCode != 400 || !strings.Contains(string(b), `strict decoding error: unknown field \"colour\"`) {
		t.Errorf("strict: %d %s", resp.StatusCode, b)
	}
	// Services get a cluster IP and the port's targetPort.
	resp, b = rc.do("POST", "/api/v1/namespaces/default/services", "", "application/json", []byte(`{"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`))
	svc := decodeMap(t, b)
	sspec := svc["spec"].(map[string]any)
	if resp.StatusCode != 201 || sspec["clusterIP"] == nil || sspec["type"] != "ClusterIP" || sspec["ports"].([]any)[0].(map[string]any)["targetPort"] != float64(80) {
		t.Errorf("service: %d %s", resp.StatusCode, b)
	}
	ns, _ := rc.s.Get("namespaces", "", "default")
	if ns.Labels()["kubernetes.io/metadata.name"] != "default" {
		t.Errorf("namespace labels %v", ns.Labels())
	}
}

func TestFieldSelectorErrors(t *testing.T) {
	rc := newRaw(t)
	for _, c := range []struct{ path, want string }{
		{"/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3D1", `field label not supported: spec.foo`},
		{"/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3D1", `\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"`},
	} {
		resp, b := rc.do("GET", c.path, "", "", nil)
		if resp.StatusCode != 400 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, b)
		}
	}
}

func TestOpenAPIV3Schemas(t *testing.T) {
	rc := newRaw(t)
	resp, b := rc.do("GET", "/openapi/v3", "", "", nil)
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
	}
	json.Unmarshal(b, &idx)
	url := idx.Paths["api/v1"].ServerRelativeURL
	if resp.StatusCode != 200 || !strings.HasPrefix(url, "/openapi/v3/api/v1?hash=") || idx.Paths["apis/apps/v1"].ServerRelativeURL == "" {
		t.Fatalf("index: %d %s", resp.StatusCode, b)
	}
	_, b = rc.do("GET", url, "", "", nil)
	var doc struct {
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	pod := doc.Components.Schemas["io.k8s.api.core.v1.Pod"]
	gvk, _ := pod["x-kubernetes-group-version-kind"].([]any)
	props, _ := pod["properties"].(map[string]any)
	if len(gvk) != 1 || props["spec"] == nil || props["apiVersion"] == nil || pod["description"] == "" {
		t.Fatalf("Pod schema %v", pod)
	}
	containers := doc.Components.Schemas["io.k8s.api.core.v1.PodSpec"]["properties"].(map[string]any)["containers"].(map[string]any)
	if containers["x-kubernetes-patch-merge-key"] != "name" || containers["x-kubernetes-list-type"] != "map" || containers["type"] != "array" {
		t.Fatalf("containers schema %v", containers)
	}
}
