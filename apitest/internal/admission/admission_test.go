package admission

import (
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

var (
	podKind        = meta.GroupVersionKind{Version: "v1", Kind: "Pod"}
	serviceKind    = meta.GroupVersionKind{Version: "v1", Kind: "Service"}
	deploymentKind = meta.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	configMapKind  = meta.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := jsonobj.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// create decodes and admits obj as a create, failing the test on an error.
func create(t *testing.T, c *Chain, gvk meta.GroupVersionKind, o map[string]any) map[string]any {
	t.Helper()
	o, _, st := Decode(gvk, o, "")
	if st != nil {
		t.Fatalf("decode: %s", st.Message)
	}
	if o, st = c.Admit(gvk, o, nil); st != nil {
		t.Fatalf("admit: %s", st.Message)
	}
	return o
}

func TestDecodeWrongTypeAndUnknownFields(t *testing.T) {
	_, _, st := Decode(configMapKind, obj(t, `{"metadata":{"name":"c"},"data":{"a":1}}`), "")
	if st == nil || st.Code != 400 || !strings.Contains(st.Message,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`) {
		t.Fatalf("a number where a string goes: %+v", st)
	}
	unknown := `{"metadata":{"name":"c"},"data":{"a":"1"},"spec":{"x":1}}`
	out, warnings, st := Decode(configMapKind, obj(t, unknown), "Warn")
	if st != nil || len(warnings) != 1 || warnings[0] != `unknown field "spec"` || out["spec"] != nil {
		t.Fatalf("Warn: %v %v %v", out, warnings, st)
	}
	if _, warnings, _ := Decode(configMapKind, obj(t, unknown), "Ignore"); len(warnings) != 0 {
		t.Fatalf("Ignore warns of nothing: %v", warnings)
	}
	if _, _, st := Decode(configMapKind, obj(t, unknown), "Strict"); st == nil || !strings.Contains(st.Message, `strict decoding error: unknown field "spec"`) {
		t.Fatalf("Strict: %+v", st)
	}
	custom := obj(t, `{"spec":{"x":1}}`)
	if out, _, st := Decode(meta.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, custom, "Strict"); st != nil || jsonobj.Map(out["spec"])["x"] == nil {
		t.Fatalf("a kind without a schema is taken as it is: %v %v", out, st)
	}
}

func TestPodCreate(t *testing.T) {
	var c Chain
	pod := create(t, &c, podKind, obj(t, `{"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
		{"name":"a","image":"nginx","resources":{"limits":{"cpu":"1","memory":"1Gi"}}},
		{"name":"b","image":"app:1.2","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}`))
	cs := jsonobj.ListAt(pod, "spec", "containers")
	if got := jsonobj.Str(jsonobj.Map(cs[0]), "imagePullPolicy") + "," + jsonobj.Str(jsonobj.Map(cs[1]), "imagePullPolicy"); got != "Always,IfNotPresent" {
		t.Errorf("pull policies: %s", got)
	}
	if req := jsonobj.StrAt(jsonobj.Map(cs[0]), "resources", "requests", "memory"); req != "1Gi" {
		t.Errorf("requests default to limits: %q", req)
	}
	if got := jsonobj.StrAt(pod, "status", "phase") + "," + jsonobj.StrAt(pod, "status", "qosClass"); got != "Pending,Guaranteed" {
		t.Errorf("status: %s", got)
	}
	if n := len(jsonobj.ListAt(pod, "spec", "tolerations")); n != 2 {
		t.Errorf("DefaultTolerationSeconds adds two tolerations, got %d", n)
	}
	if jsonobj.StrAt(pod, "spec", "preemptionPolicy") != "PreemptLowerPriority" {
		t.Errorf("the Priority plugin sets preemptionPolicy: %v", pod["spec"])
	}
}

func TestServicesGetAddressesInOrder(t *testing.T) {
	var c Chain
	svc := `{"metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80}]}}`
	a := create(t, &c, serviceKind, obj(t, svc))
	b := create(t, &c, serviceKind, obj(t, svc))
	if ip := jsonobj.StrAt(a, "spec", "clusterIP") + " " + jsonobj.StrAt(b, "spec", "clusterIP"); ip != "10.0.0.11 10.0.0.12" {
		t.Errorf("cluster IPs: %s", ip)
	}
	port := jsonobj.Map(jsonobj.ListAt(a, "spec", "ports")[0])
	if jsonobj.Num(port["nodePort"]) != 30001 || jsonobj.Num(port["targetPort"]) != 80 {
		t.Errorf("node port and target port: %v", port)
	}
	// An update keeps the allocation.
	upd, _, _ := Decode(serviceKind, obj(t, svc), "")
	upd, st := c.Admit(serviceKind, upd, a)
	if st != nil || jsonobj.StrAt(upd, "spec", "clusterIP") != "10.0.0.11" || jsonobj.Num(jsonobj.Map(jsonobj.ListAt(upd, "spec", "ports")[0])["nodePort"]) != 30001 {
		t.Errorf("update: %v %v", upd["spec"], st)
	}
}

func TestDeploymentValidation(t *testing.T) {
	var c Chain
	d, _, _ := Decode(deploymentKind, obj(t, `{"kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":-1,
		"selector":{"matchLabels":{"app":"web"}},
		"template":{"metadata":{"labels":{"app":"other"}},"spec":{"containers":[{"name":"Bad_Name"}]}}}}`), "")
	_, st := c.Admit(deploymentKind, d, nil)
	if st == nil || st.Code != 422 {
		t.Fatalf("want 422, got %+v", st)
	}
	var fields []string
	for _, cause := range st.Details.Causes {
		fields = append(fields, cause.Field)
	}
	want := "spec.replicas spec.template.metadata.labels spec.template.spec.containers[0].name spec.template.spec.containers[0].image"
	if strings.Join(fields, " ") != want || !strings.HasPrefix(st.Message, `Deployment.apps "web" is invalid: [`) {
		t.Fatalf("causes %v in %q", fields, st.Message)
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	var c Chain
	ns := create(t, &c, meta.GroupVersionKind{Version: "v1", Kind: "Namespace"}, obj(t, `{"metadata":{"name":"team"}}`))
	if jsonobj.StrAt(ns, "status", "phase") != "Active" || len(jsonobj.ListAt(ns, "spec", "finalizers")) != 1 ||
		jsonobj.StrAt(ns, "metadata", "labels", "kubernetes.io/metadata.name") != "team" {
		t.Fatalf("namespace: %v", ns)
	}
}

func TestObjectMeta(t *testing.T) {
	if errs := ValidateObjectMeta(obj(t, `{"name":"a.b"}`), NamesLabel); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("a namespace's name is a label: %v", errs)
	}
	if errs := ValidateObjectMeta(obj(t, `{"name":"a.b","labels":{"ok":"v","bad key!":"v"},"finalizers":["x"]}`), NamesSubdomain); len(errs) != 2 {
		t.Errorf("a bad label key and an unqualified finalizer: %v", errs)
	}
	// The rule of each kind's names (recorded from the kube-apiserver's answers).
	for _, c := range []struct {
		name, rule string
		errs       int
	}{
		{"system:controller:x", NamesPathSegment, 0}, // cluster roles
		{"a/b", NamesPathSegment, 1},
		{"1abc", NamesLabel, 0},
		{"1abc", Names1035Label, 1},
		{"a:b", NamesSubdomain, 1},
		{strings.Repeat("a", 64), NamesLabel, 1},
		{strings.Repeat("a", 64) + ".", NamesLabel, 2}, // too long and not a label: both said
		{"10.0.0.1", "", 0},                            // a rule of the kind's own: a path segment at least
	} {
		if errs := ValidateObjectMeta(map[string]any{"name": c.name}, c.rule); len(errs) != c.errs {
			t.Errorf("%q by %q: %v", c.name, c.rule, errs)
		}
	}
	old := obj(t, `{"name":"a","finalizers":["example.com/f"]}`)
	upd := obj(t, `{"name":"a","finalizers":["example.com/f","example.com/g"]}`)
	if errs := ValidateObjectMetaUpdate(upd, old, true, NamesSubdomain); len(errs) != 1 || errs[0].Type != "FieldValueForbidden" {
		t.Errorf("no new finalizers while deleting: %v", errs)
	}
	if errs := ValidateObjectMetaUpdate(upd, old, false, NamesSubdomain); len(errs) != 0 {
		t.Errorf("new finalizers before the deletion are fine: %v", errs)
	}
}

func TestStatusUpdateKeepsQOSClass(t *testing.T) {
	next := obj(t, `{"status":{"phase":"Running"}}`)
	PrepareForStatusUpdate(podKind, next, obj(t, `{"status":{"qosClass":"Burstable"}}`))
	if jsonobj.StrAt(next, "status", "qosClass") != "Burstable" {
		t.Fatalf("qosClass: %v", next)
	}
}

func TestPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.27": "IfNotPresent",
		"registry:5000/app": "Always", "registry:5000/app:v2": "IfNotPresent", "app@sha256:abc": "IfNotPresent",
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("%s: got %s, want %s", image, got, want)
		}
	}
}
