package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/meta"
)

// The controller author's workbench against kube-apiserver v1.36.3: CRDs written by
// cmd/crdgen are accepted and validate and default as their markers say; the roles
// cmd/controller-manager -rbac writes are what the controller needs, and a missing one is
// the start-up check's one error; and the answers apitest imitates (access reviews, field
// selectors of custom resources) have the real server's shape and words.

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// applyManifest creates every document of a YAML manifest (AlreadyExists is fine) through
// discovery, and returns the objects as created.
func applyManifest(t *testing.T, ctx context.Context, ac *apiclient.Client, manifest []byte, ns string) []*meta.Unstructured {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	var out []*meta.Unstructured
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		u := &meta.Unstructured{Object: doc}
		res, err := ac.ResolveKind(ctx, u.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		r := apiclient.NewResource[*meta.Unstructured](ac, res.GroupVersionResource)
		if res.Namespaced {
			r = r.Namespace(ns)
		}
		created, err := r.Create(ctx, u, apiclient.CreateOptions{})
		if meta.IsAlreadyExists(err) {
			created, err = r.Get(ctx, u.GetName(), apiclient.GetOptions{})
		}
		if err != nil {
			t.Fatalf("creating %s %s: %v", res.Kind, u.GetName(), err)
		}
		out = append(out, created)
	}
	return out
}

// waitEstablished waits until the CRD name is Established and its resource is discovered.
func waitEstablished(t *testing.T, ctx context.Context, ac *apiclient.Client, name string) {
	t.Helper()
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	poll(t, ctx, "CRD "+name+" Established", func() (bool, string) {
		u, err := crds.Get(ctx, name, apiclient.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := meta.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, "conditions " + toJSON(conds)
	})
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// The test API's manifest (kinds/crdgen/testdata/api.golden.yaml, what crdgen writes from
// its types, checked by crdgen's tests) is accepted: every CRD is Established, and the
// Gadgets it serves are defaulted, pruned and validated as the markers say.
func TestGeneratedCRDOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ac := acClient(t, c, nil)
	manifest, err := os.ReadFile("../kinds/crdgen/testdata/api.golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range applyManifest(t, ctx, ac, manifest, "") {
		waitEstablished(t, ctx, ac, crd.GetName())
	}
	ac.InvalidateDiscovery()
	gadgets := apiclient.NewResource[*meta.Unstructured](ac, meta.GroupVersionResource{Group: "test.informerkit.io", Version: "v1", Resource: "gadgets"})
	suffix := randomSuffix()
	gadget := func(name string, spec map[string]any) *meta.Unstructured {
		s := map[string]any{"name": "a", "size": 1, "required": "x", "shape": "round"}
		for k, v := range spec {
			if v == nil {
				delete(s, k)
			} else {
				s[k] = v
			}
		}
		return &meta.Unstructured{Object: map[string]any{"apiVersion": "test.informerkit.io/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name + "-" + suffix}, "spec": s}}
	}

	// Defaults and pruning.
	got, err := gadgets.Create(ctx, gadget("defaults", map[string]any{"unknown": "pruned",
		"template": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "anything": "kept"}}), apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := got.Object["spec"].(map[string]any)
	if spec["replicas"] != int64(1) || spec["mode"] != "Fast" {
		t.Errorf("defaults: replicas %v, mode %v; want 1 and Fast (+default)", spec["replicas"], spec["mode"])
	}
	if _, ok := spec["unknown"]; ok {
		t.Error("an unknown field was kept: the schema is not structural")
	}
	if tmpl, _ := spec["template"].(map[string]any); tmpl["anything"] != "kept" {
		t.Errorf("+preserveUnknownFields: template %v", spec["template"])
	}

	// apitest, with the same manifest, prunes, defaults and validates the same way.
	srv := apitest.NewServer()
	defer srv.Close()
	if err := srv.AddCRD(manifest); err != nil {
		t.Fatal(err)
	}
	tc, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	fakeGadgets := apiclient.NewResource[*meta.Unstructured](tc, gadgets.GroupVersionResource())
	fakeGot, err := fakeGadgets.Create(ctx, gadget("defaults", map[string]any{"unknown": "pruned",
		"template": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "anything": "kept"}}), apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if real, fake := toJSON(got.Object["spec"]), toJSON(fakeGot.Object["spec"]); real != fake {
		t.Errorf("spec once pruned and defaulted:\n kube-apiserver %s\n apitest        %s", real, fake)
	}

	// Validation: each marker's rule, in the server's words, and apitest's (but CEL).
	for _, c := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"min", map[string]any{"replicas": -1}, "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"},
		{"type", map[string]any{"replicas": "three"}, `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{"minlength", map[string]any{"name": ""}, `spec.name: Invalid value: "": spec.name in body should be at least 1 chars long`},
		{"maxlength", map[string]any{"name": strings.Repeat("a", 64)}, "spec.name: Too long: may not be more than 63 bytes"},
		{"nested", map[string]any{"inner": map[string]any{"depth": 0}}, "spec.inner.depth: Invalid value: 0: spec.inner.depth in body should be greater than or equal to 1"},
		{"itemrequired", map[string]any{"ports": []any{map[string]any{"name": "a", "number": 1}}}, "spec.ports[0].protocol: Required value"},
		{"max", map[string]any{"replicas": 11}, "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"},
		{"pattern", map[string]any{"name": "Not_A_Label"}, `spec.name: Invalid value: "Not_A_Label": spec.name in body should match`},
		{"enum", map[string]any{"mode": "Medium"}, `spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"`},
		{"required", map[string]any{"name": nil}, "spec.name: Required value"},
		{"exclusive", map[string]any{"size": 0}, "spec.size: Invalid value: 0: spec.size in body should be greater than 0"},
		{"cel", map[string]any{"size": 5, "maxSize": 3}, "size exceeds maxSize"},
		{"maxitems", map[string]any{"tags": []any{"a", "b", "c", "d", "e", "f"}}, "spec.tags: Too many: 6: must have at most 5 items"},
		{"set", map[string]any{"tags": []any{"a", "a"}}, `spec.tags[1]: Duplicate value: "a"`},
		{"maxprops", map[string]any{"labels": map[string]any{"a": "1", "b": "2", "c": "3", "d": "4"}}, "spec.labels: Too many: 4: must have at most 3 items"},
	} {
		_, err := gadgets.Create(ctx, gadget(c.name, c.spec), apiclient.CreateOptions{})
		if !meta.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want 422 saying %q", c.name, err, c.want)
		}
		if c.name == "cel" {
			continue // apitest does not run CEL rules
		}
		_, ferr := fakeGadgets.Create(ctx, gadget(c.name, c.spec), apiclient.CreateOptions{})
		if real, fake := schemaCauses(err), schemaCauses(ferr); real == "" || real != fake {
			t.Errorf("%s: the causes but CEL's:\n kube-apiserver %s (%v)\n apitest        %s (%v)", c.name, real, err, fake, ferr)
		}
	}

	// The subresources and printer columns.
	var scale struct {
		Spec struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
	}
	raw, err := ac.Do(ctx, apiclient.Request{Path: "/apis/test.informerkit.io/v1/gadgets/" + got.GetName() + "/scale"})
	if err != nil || json.Unmarshal(raw, &scale) != nil || scale.Spec.Replicas != 1 {
		t.Errorf("scale: %s %v", raw, err)
	}
	var table struct {
		Columns []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
	}
	tbl := tableOf(t, ctx, c.HTTPClient(), c.URL, "/apis/test.informerkit.io/v1/gadgets/"+got.GetName())
	if err := json.Unmarshal(tbl, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, col := range table.Columns {
		cols = append(cols, col.Name)
	}
	if !slices.Contains(cols, "Replicas") || !slices.Contains(cols, "Ready") {
		t.Errorf("table columns %q, want the +printcolumn ones", cols)
	}

	// apitest serves the same columns from the same manifest.
	if _, err := srv.Create("policies", map[string]any{"apiVersion": "test.informerkit.io/v2", "kind": "Policy",
		"metadata": map[string]any{"namespace": "default", "name": "p"}}); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, c)
	policies := apiclient.NewResource[*meta.Unstructured](ac, meta.GroupVersionResource{Group: "test.informerkit.io", Version: "v2", Resource: "policies"})
	if _, err := policies.Namespace(ns).Create(ctx, &meta.Unstructured{Object: map[string]any{"apiVersion": "test.informerkit.io/v2",
		"kind": "Policy", "metadata": map[string]any{"name": "p"}}}, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc := srv.Client()
	defer hc.CloseIdleConnections()
	for _, paths := range [][2]string{
		{"/apis/test.informerkit.io/v1/gadgets/" + got.GetName(), "/apis/test.informerkit.io/v1/gadgets/" + fakeGot.GetName()},
		{"/apis/test.informerkit.io/v2/namespaces/" + ns + "/policies/p", "/apis/test.informerkit.io/v2/namespaces/default/policies/p"},
	} {
		real, fakeTbl := tableShape(t, tableOf(t, ctx, c.HTTPClient(), c.URL, paths[0])), tableShape(t, tableOf(t, ctx, hc, srv.URL, paths[1]))
		if real != fakeTbl {
			t.Errorf("table of %s:\n kube-apiserver %s\n apitest        %s", paths[0], real, fakeTbl)
		}
	}
}

// tableShape is a Table's column definitions and its first row's cells, but the cells of
// date columns (ages differ by when each was made).
func tableShape(t *testing.T, raw []byte) string {
	t.Helper()
	var tbl struct {
		Columns []map[string]any `json:"columnDefinitions"`
		Rows    []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(raw, &tbl); err != nil || len(tbl.Rows) != 1 {
		t.Fatalf("table %s: %v", raw, err)
	}
	for i, col := range tbl.Columns {
		if col["type"] == "date" {
			tbl.Rows[0].Cells[i] = "<age>"
		}
	}
	return toJSON(tbl.Columns) + " " + toJSON(tbl.Rows[0].Cells)
}

// tableOf GETs base+path with hc as a meta.k8s.io/v1 Table.
func tableOf(t *testing.T, ctx context.Context, hc *http.Client, base, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as a Table: %s %s", path, resp.Status, b)
	}
	return b
}

// A field selector on a field a custom resource does not support: the kube-apiserver's
// words, which apitest answers too.
func TestCustomResourceFieldSelectorOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ac := acClient(t, c, nil)
	installDeploymentCRD(t, ctx, ac)
	ns := newNamespace(t, c)
	path := "/apis/" + deployment.DeploymentGVR.Group + "/" + deployment.DeploymentGVR.Version + "/namespaces/" + ns +
		"/" + deployment.DeploymentGVR.Resource
	query := map[string][]string{"fieldSelector": {"spec.size=1"}}
	_, realErr := ac.Do(ctx, apiclient.Request{Path: path, Query: query})

	srv := apitest.NewServer()
	defer srv.Close()
	if err := srv.AddCRD(deployment.CRDYAML); err != nil {
		t.Fatal(err)
	}
	tc, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	_, testErr := tc.Do(ctx, apiclient.Request{Path: strings.Replace(path, ns, "default", 1), Query: query})
	for name, err := range map[string]error{"kube-apiserver": realErr, "apitest": testErr} {
		st, ok := meta.AsStatus(err)
		if !ok || st.Code != http.StatusBadRequest || st.Message != "field label not supported: spec.size" {
			t.Errorf("%s: %v, want 400 field label not supported: spec.size", name, err)
		}
	}
}

// accessReview posts a SelfSubjectAccessReview of attrs and returns the answer as a map.
func accessReview(t *testing.T, ctx context.Context, ac *apiclient.Client, attrs map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": attrs}})
	raw, err := ac.Do(ctx, apiclient.Request{Method: http.MethodPost, Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// keys lists a map's keys and, one level down, its maps' keys ("status.allowed").
func keys(m map[string]any) []string {
	var out []string
	for k, v := range m {
		out = append(out, k)
		if sub, ok := v.(map[string]any); ok {
			for k2 := range sub {
				out = append(out, k+"."+k2)
			}
		}
	}
	slices.Sort(out)
	return out
}

// serviceAccountToken creates the service account ns/name and returns a token of it
// (TokenRequest).
func serviceAccountToken(t *testing.T, ctx context.Context, ac *apiclient.Client, ns, name string) string {
	t.Helper()
	sa := &meta.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name}}}
	if _, err := apiclient.NewResource[*meta.Unstructured](ac, meta.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).
		Namespace(ns).Create(ctx, sa, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}`)
	raw, err := ac.Do(ctx, apiclient.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + ns + "/serviceaccounts/" + name + "/token", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &tr); err != nil || tr.Status.Token == "" {
		t.Fatalf("token request: %s %v", raw, err)
	}
	return tr.Status.Token
}

// The roles runner.Permissions and rbac.Manifest derive for the MiniDeployment controller
// (what cmd/controller-manager -rbac writes) let it run as a service account that has
// nothing else; without one of them its Manager's Start fails at once, naming it. The
// access reviews on the way have the shape apitest answers with.
func TestGeneratedRBACOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := acClient(t, c, nil)
	installDeploymentCRD(t, ctx, admin)
	ns := newNamespace(t, c)
	managerFor := func(cfg *apiclient.Config) *controller.Manager {
		m, err := controller.NewManager(cfg, controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler),
			LeaderElection: true, LeaderElectionID: deployment.Name, LeaderElectionNamespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	descs := []runner.Descriptor{deployment.Descriptor()}
	dry, err := runner.New(managerFor(&apiclient.Config{Host: "http://127.0.0.1:1"}), descs, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := dry.Permissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	grant := func(sa string, rules []rbac.Rule) *apiclient.Config {
		name := "e2e-" + sa + "-" + ns
		y, err := rbac.Manifest(name, rules, rbac.ManifestOptions{ServiceAccount: sa, ServiceAccountNamespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		token := serviceAccountToken(t, ctx, admin, ns, sa)
		applyManifest(t, ctx, admin, y, ns)
		t.Cleanup(func() {
			for _, r := range []string{"clusterrolebindings", "clusterroles"} {
				_ = apiclient.NewResource[*meta.Unstructured](admin, meta.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: r}).
					Delete(context.Background(), name, apiclient.DeleteOptions{})
			}
		})
		cfg := mustConfig(t, c)
		cfg.BearerToken = token
		return cfg
	}

	// The whole set: the check passes and the controller works.
	cfg := grant("full", rules)
	sa, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	pods := map[string]any{"verb": "delete", "resource": "pods"}
	poll(t, ctx, "the roles in force", func() (bool, string) { // the authorizer's cache catches up
		st := accessReview(t, ctx, sa, pods)["status"].(map[string]any)
		return st["allowed"] == true, toJSON(st)
	})
	allowed := accessReview(t, ctx, sa, pods)
	denied := accessReview(t, ctx, sa, map[string]any{"verb": "list", "resource": "secrets"})
	t.Logf("kube-apiserver's reviews: allowed %s; denied %s", toJSON(allowed), toJSON(denied))
	srv := apitest.NewServer()
	defer srv.Close()
	if _, err := srv.Deny(apitest.AccessRule{Verb: apitest.VerbList, Resource: "secrets"}); err != nil {
		t.Fatal(err)
	}
	tc, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tAllowed := accessReview(t, ctx, tc, pods)
	tDenied := accessReview(t, ctx, tc, map[string]any{"verb": "list", "resource": "secrets"})
	for _, pair := range [][2]map[string]any{{allowed, tAllowed}, {denied, tDenied}} {
		real, fake := keys(pair[0]), keys(pair[1])
		if !slices.Equal(real, fake) {
			t.Errorf("review keys: kube-apiserver %q, apitest %q", real, fake)
		}
		if pair[0]["status"].(map[string]any)["allowed"] != pair[1]["status"].(map[string]any)["allowed"] {
			t.Errorf("allowed: kube-apiserver %v, apitest %v", pair[0]["status"], pair[1]["status"])
		}
		entry := func(m map[string]any) string {
			mf := m["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
			return toJSON([]any{mf["manager"], mf["operation"], mf["fieldsV1"]})
		}
		if real, fake := entry(pair[0]), entry(pair[1]); real != fake {
			t.Errorf("managedFields: kube-apiserver %s, apitest %s", real, fake)
		}
	}

	r, err := runner.New(managerFor(cfg), descs, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	mds := apiclient.NewResource[*deployment.MiniDeployment](admin, deployment.DeploymentGVR).Namespace(ns)
	two := int32(2)
	md := &deployment.MiniDeployment{TypeMeta: deployment.DeploymentKind.TypeMeta(), ObjectMeta: meta.ObjectMeta{Name: "web"},
		Spec: deployment.Spec{Replicas: &two, Template: deployment.PodTemplate{Spec: deployment.PodSpec{
			Containers: []deployment.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}}}}}
	if _, err := mds.Create(ctx, md, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podsOf := apiclient.NewResource[*deployment.Pod](admin, deployment.PodGVR).Namespace(ns)
	poll(t, ctx, "2 pods made by the controller running as the service account", func() (bool, string) {
		l, err := podsOf.List(ctx, apiclient.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 2, ""
	})
	stopRun()
	if err := <-done; err != nil {
		t.Errorf("the controller under its generated roles: %v", err)
	}

	// One rule short: Start fails at once, naming it.
	short := slices.DeleteFunc(slices.Clone(rules), func(r rbac.Rule) bool { return r.Resource == "pods" })
	short = append(short, rbac.Rule{Resource: "pods", Verbs: []string{"get", "list", "watch", "create", "update", "patch"}})
	cfg = grant("short", short)
	sa2, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sa2.Close()
	poll(t, ctx, "the short roles in force", func() (bool, string) {
		st := accessReview(t, ctx, sa2, map[string]any{"verb": "create", "resource": "pods"})["status"].(map[string]any)
		return st["allowed"] == true, toJSON(st)
	})
	r, err = runner.New(managerFor(cfg), descs, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(ctx)
	var missing *rbac.MissingPermissionsError
	if !errors.As(err, &missing) || len(missing.Denied) != 1 || missing.Denied[0].String() != "delete pods in all namespaces" {
		t.Fatalf("Start without delete on pods: %v", err)
	}
	t.Logf("the start-up check: %v", err)
}

// schemaCauses lists the causes of a 422 but those of CEL rules, which apitest does not run:
// a rule's error names its field from the root (".spec.replicas"), and the kube-apiserver
// adds one without a field when the schema's errors kept rules from being checked.
func schemaCauses(err error) string {
	var st *meta.Status
	if !errors.As(err, &st) || st.Details == nil {
		return ""
	}
	var out []string
	for _, c := range st.Details.Causes {
		if strings.HasPrefix(c.Field, ".") || c.Field == "" || c.Field == "<nil>" {
			continue
		}
		out = append(out, c.Type+" "+c.Field+": "+c.Message)
	}
	return strings.Join(out, "; ")
}
