package kubeschema

import (
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func field(t *testing.T, typ, name string) *Field {
	t.Helper()
	ty := Lookup(typ)
	if ty == nil {
		t.Fatalf("no type %s", typ)
	}
	f := ty.Field(name)
	if f == nil {
		t.Fatalf("%s has no field %s", typ, name)
	}
	return f
}

func TestTableFacts(t *testing.T) {
	if Source() == "" || len(Types()) < 100 {
		t.Fatalf("table: source %q, %d types", Source(), len(Types()))
	}
	spec := field(t, "io.k8s.api.core.v1.Pod", "spec")
	if spec.Number != 2 || spec.Wire() != LengthDelimited || spec.Kind != Message || spec.Type().Name != "io.k8s.api.core.v1.PodSpec" {
		t.Errorf("Pod.spec = %+v", spec)
	}
	ports := field(t, "io.k8s.api.core.v1.Container", "ports")
	if !ports.Repeated || ports.PatchStrategy != "merge" || ports.PatchMergeKey != "containerPort" ||
		ports.ListType != "map" || !slices.Equal(ports.ListMapKeys, []string{"containerPort", "protocol"}) {
		t.Errorf("Container.ports = %+v", ports)
	}
	containers := field(t, "io.k8s.api.core.v1.PodSpec", "containers")
	if containers.PatchMergeKey != "name" || containers.OmitEmpty || containers.Pointer || !containers.Required {
		t.Errorf("PodSpec.containers = %+v", containers)
	}
	labels := field(t, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "labels")
	if labels.MapKey != "string" || labels.Kind != String || labels.Number != 11 {
		t.Errorf("ObjectMeta.labels = %+v", labels)
	}
	// ListMeta.remainingItemCount: the struct tag says bytes, the wire is a varint.
	if f := field(t, "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "remainingItemCount"); f.Wire() != Varint || f.Kind != Int64 || !f.Pointer {
		t.Errorf("ListMeta.remainingItemCount = %+v", f)
	}
	// Volume's source is inline in JSON, field 2 on the wire.
	vol := Lookup("io.k8s.api.core.v1.Volume")
	if src := vol.FieldByNumber(2); src == nil || !src.Inline || vol.Field("configMap") == nil {
		t.Errorf("Volume: field 2 %+v, configMap %v", vol.FieldByNumber(2), vol.Field("configMap"))
	}
	if f := field(t, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp"); f.Type().JSON != "time" || !f.OmitZero {
		t.Errorf("creationTimestamp = %+v", f)
	}
	if f := field(t, "io.k8s.api.apps.v1.RollingUpdateDeployment", "maxSurge"); f.Type().JSON != "int-or-string" {
		t.Errorf("maxSurge type %s", f.Type().JSON)
	}
	if f := field(t, "io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "verbs"); f.Type().JSON != "array" || f.Repeated {
		t.Errorf("APIResource.verbs = %+v", f)
	}
	// StatefulSet's rollingUpdate.maxUnavailable: the struct tag says varint, generated.proto
	// (and the marshallers) a message.
	if f := field(t, "io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy", "maxUnavailable"); f.Wire() != LengthDelimited || f.WireName != "bytes" {
		t.Errorf("RollingUpdateStatefulSetStrategy.maxUnavailable = %+v", f)
	}
}

// TestMessagesAreLengthDelimited checks every field of every type: a message is written
// length-delimited, whatever its Go struct tag says.
func TestMessagesAreLengthDelimited(t *testing.T) {
	for _, ty := range Types() {
		for _, f := range ty.Fields {
			if f.Kind == Message && f.WireName != "bytes" {
				t.Errorf("%s.%s: message with wire %q", ty.Name, f.Name, f.WireName)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	cases := []struct{ typ, field, want string }{
		{"io.k8s.api.apps.v1.DeploymentSpec", "replicas", "1"},
		{"io.k8s.api.apps.v1.DeploymentSpec", "revisionHistoryLimit", "10"},
		{"io.k8s.api.apps.v1.DeploymentSpec", "progressDeadlineSeconds", "600"},
		{"io.k8s.api.apps.v1.DeploymentStrategy", "type", `"RollingUpdate"`},
		{"io.k8s.api.core.v1.PodSpec", "restartPolicy", `"Always"`},
		{"io.k8s.api.core.v1.PodSpec", "securityContext", `{}`},
		{"io.k8s.api.core.v1.Container", "terminationMessagePath", `"/dev/termination-log"`},
		{"io.k8s.api.core.v1.ContainerPort", "protocol", `"TCP"`},
		{"io.k8s.api.core.v1.Secret", "type", `"Opaque"`},
		{"io.k8s.api.core.v1.NamespaceStatus", "phase", `"Active"`},
	}
	for _, c := range cases {
		if f := field(t, c.typ, c.field); string(f.Default) != c.want {
			t.Errorf("%s.%s default %s, want %s", c.typ, c.field, f.Default, c.want)
		}
	}
	if f := field(t, "io.k8s.api.core.v1.Container", "imagePullPolicy"); f.Default != nil {
		t.Errorf("imagePullPolicy has a constant default %s (it depends on the image)", f.Default)
	}
	esl := field(t, "io.k8s.api.core.v1.PodSpec", "enableServiceLinks")
	if !esl.AppliesDefault("v1/Pod", nil) || esl.AppliesDefault("apps/v1/Deployment", nil) {
		t.Errorf("enableServiceLinks applies in pods only: %v", esl.DefaultKinds)
	}
	itp := field(t, "io.k8s.api.core.v1.ServiceSpec", "internalTrafficPolicy")
	if !itp.AppliesDefault("v1/Service", map[string]any{"type": "ClusterIP"}) || itp.AppliesDefault("v1/Service", map[string]any{"type": "ExternalName"}) {
		t.Errorf("internalTrafficPolicy: when %q", itp.DefaultWhen)
	}
}

func TestKinds(t *testing.T) {
	for _, k := range Kinds() {
		if k.Type == nil {
			t.Errorf("%v: no type", k.GroupVersionKind)
		}
	}
	k, ok := ForKind("apps", "v1", "DeploymentList")
	if !ok || k.Type.Name != "io.k8s.api.apps.v1.DeploymentList" || k.List != nil {
		t.Errorf("ForKind DeploymentList = %+v, %v", k, ok)
	}
	if k, ok := ForKind("", "v1", "Pod"); !ok || k.List == nil || k.Type.GroupVersionKinds()[0].Kind != "Pod" {
		t.Errorf("ForKind Pod = %+v, %v", k, ok)
	}
	if _, ok := ForKind("example.com", "v1", "Widget"); ok {
		t.Error("ForKind found a custom kind")
	}
}

func TestResources(t *testing.T) {
	byKey := map[string]Resource{}
	for _, r := range Resources() {
		byKey[r.Group+"/"+r.Version+"/"+r.Resource] = r
		if _, ok := ForKind(r.Group, r.Version, r.Kind); !ok && r.Group != "apiextensions.k8s.io" {
			t.Errorf("%s/%s: no kind %s in the table", r.Group, r.Resource, r.Kind)
		}
	}
	if len(byKey) < 60 {
		t.Fatalf("%d resources", len(byKey))
	}
	pods := byKey["/v1/pods"]
	if pods.Kind != "Pod" || !pods.Namespaced || !pods.Generation || pods.Names != "dns-subdomain" ||
		!slices.Contains(pods.FieldLabels, "spec.nodeName") || pods.FieldLabelPaths["spec.host"] != "spec.nodeName" ||
		pods.FieldLabelError != "field label not supported: {label}" || len(pods.Columns) != 9 {
		t.Errorf("pods: %+v", pods)
	}
	if ns := byKey["/v1/namespaces"]; ns.Names != "dns-label" || ns.Namespaced || !slices.Contains(ns.ShortNames, "ns") {
		t.Errorf("namespaces: %+v", ns)
	}
	if l := byKey["coordination.k8s.io/v1/leases"]; !l.CreateOnUpdate || l.Generation {
		t.Errorf("leases: %+v", l)
	}
	if cr := byKey["rbac.authorization.k8s.io/v1/clusterroles"]; cr.Names != "path-segment" {
		t.Errorf("clusterroles: names %q", cr.Names)
	}
	var scale *Subresource
	for i, s := range byKey["apps/v1/deployments"].Subresources {
		if s.Name == "scale" {
			scale = &byKey["apps/v1/deployments"].Subresources[i]
		}
	}
	if scale == nil || scale.Group != "autoscaling" || scale.Kind != "Scale" {
		t.Errorf("deployments/scale: %+v", scale)
	}
	// The first version listed is the group's preferred.
	var hpa []string
	for _, r := range Resources() {
		if r.Resource == "horizontalpodautoscalers" {
			hpa = append(hpa, r.Version)
		}
	}
	if !slices.Equal(hpa, []string{"v2", "v1"}) {
		t.Errorf("horizontalpodautoscalers versions %v", hpa)
	}
}

// TestLazyDecoding: a type looked up is decoded once; decoding everything afterwards gives
// the same types, every message field resolving to a type of the table.
func TestLazyDecoding(t *testing.T) {
	pod := Lookup("io.k8s.api.core.v1.Pod")
	if Lookup("io.k8s.api.core.v1.Pod") != pod || Lookup("io.k8s.nope.v1.Nope") != nil {
		t.Fatal("lookup")
	}
	// Concurrent first uses of the same types (go test -race).
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := map[*Type]bool{}
			var walk func(*Type)
			walk = func(ty *Type) {
				if ty == nil || seen[ty] {
					return
				}
				seen[ty] = true
				for _, f := range ty.JSONFields() {
					walk(f.Type())
				}
			}
			walk(Lookup("io.k8s.api.apps.v1.StatefulSet"))
		}()
	}
	wg.Wait()
	all := Types()
	if len(all) < 500 {
		t.Fatalf("%d types", len(all))
	}
	for _, ty := range all {
		if Lookup(ty.Name) != ty {
			t.Errorf("%s decoded twice", ty.Name)
		}
		for _, f := range ty.Fields {
			if f.Kind == Message && (f.Type() == nil || f.Type().Name != f.TypeName) {
				t.Errorf("%s.%s: type %v", ty.Name, f.Name, f.Type())
			}
			if f.Owner() != ty {
				t.Errorf("%s.%s: owner %v", ty.Name, f.Name, f.Owner())
			}
		}
	}
	if _, err := parse([]byte("{}")); err == nil {
		t.Error("a table without types parses")
	}
}
