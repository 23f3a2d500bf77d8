package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// Tests of apiclient against the real kube-apiserver. They use apiclient only (never
// client-go and never the harness's plain HTTP helpers for what they assert).

// acConfigMap declares the ConfigMap fields these tests read.
type acConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var (
	acConfigMaps   = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	acNamespaces   = meta.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	acPodTemplates = meta.GroupVersionResource{Version: "v1", Resource: cluster.UncachedResource}
	acCRDs         = meta.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// acClient loads the harness's kubeconfig (CA + token, verification on) with LoadConfig.
func acClient(t *testing.T, c *cluster.Cluster, edit func(*apiclient.Config)) *apiclient.Client {
	t.Helper()
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS.Insecure || len(cfg.TLS.CAData) == 0 {
		t.Fatalf("kubeconfig without a CA or with verification off: %v", cfg)
	}
	cfg.WatchProtocol = apiclient.WatchChunked
	if edit != nil {
		edit(cfg)
	}
	ac, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ac.Close)
	return ac
}

func acCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// acNamespace creates a namespace for one test through apiclient.
func acNamespace(t *testing.T, ac *apiclient.Client) string {
	t.Helper()
	ns := &acConfigMap{ObjectMeta: meta.ObjectMeta{GenerateName: "e2e-ac-"}}
	ns.APIVersion, ns.Kind = "v1", "Namespace"
	out, err := apiclient.NewResource[*acConfigMap](ac, acNamespaces).Create(acCtx(t, time.Minute), ns, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Name
}

func acRecv[T any](t *testing.T, w apiclient.Watcher[T], within time.Duration) apiclient.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed; expected an event (Err: %v)", w.(interface{ Err() error }).Err())
		}
		return ev
	case <-time.After(within):
		t.Fatalf("no watch event within %v", within)
	}
	panic("unreachable")
}

func newCM(name string, data map[string]string) *acConfigMap {
	cm := &acConfigMap{ObjectMeta: meta.ObjectMeta{Name: name}, Data: data}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	return cm
}

func TestAPIClientConfigMapCRUD(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 2*time.Minute)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns)

	created, err := cms.Create(ctx, newCM("one", map[string]string{"a": "1"}), apiclient.CreateOptions{FieldManager: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Namespace != ns {
		t.Fatalf("created %+v", created.ObjectMeta)
	}
	if _, err := cms.Create(ctx, newCM("one", nil), apiclient.CreateOptions{}); !meta.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	got, err := cms.Get(ctx, "one", apiclient.GetOptions{})
	if err != nil || got.Data["a"] != "1" {
		t.Fatalf("get: %+v %v", got, err)
	}
	got.Data["b"] = "2"
	updated, err := cms.Update(ctx, got, apiclient.UpdateOptions{})
	if err != nil || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update: %v", err)
	}
	// got still carries the old resourceVersion: a stale update is a typed conflict.
	if _, err := cms.Update(ctx, got, apiclient.UpdateOptions{}); !meta.IsConflict(err) {
		t.Fatalf("stale update: %v, want 409 Conflict", err)
	}
	for _, p := range []struct {
		pt    apiclient.PatchType
		body  string
		key   string
		value string
	}{
		{apiclient.MergePatchType, `{"data":{"m":"merge"}}`, "m", "merge"},
		{apiclient.StrategicMergePatchType, `{"data":{"s":"strategic"}}`, "s", "strategic"},
		{apiclient.JSONPatchType, `[{"op":"add","path":"/data/j","value":"json"}]`, "j", "json"},
	} {
		out, err := cms.Patch(ctx, "one", p.pt, []byte(p.body), apiclient.PatchOptions{})
		if err != nil || out.Data[p.key] != p.value {
			t.Fatalf("patch %s: %v %v", p.pt, out, err)
		}
	}
	// Delete preconditions: a wrong uid is a conflict, the right one deletes.
	wrong, rightUID := "not-the-uid", created.UID
	if err := cms.Delete(ctx, "one", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{UID: &wrong}}); !meta.IsConflict(err) {
		t.Fatalf("delete with a wrong uid: %v", err)
	}
	zero, bg := int64(0), apiclient.DeletePropagationBackground
	if err := cms.Delete(ctx, "one", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{UID: &rightUID},
		GracePeriodSeconds: &zero, PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "one", apiclient.GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestAPIClientServerSideApply(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, time.Minute)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns)
	cfg := func(v string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "applied"}, "data": map[string]any{"owned": v}}
	}
	out, err := cms.Apply(ctx, "applied", cfg("by-a"), apiclient.ApplyOptions{FieldManager: "manager-a"})
	if err != nil || out.Data["owned"] != "by-a" {
		t.Fatalf("apply a: %v %v", out, err)
	}
	_, err = cms.Apply(ctx, "applied", cfg("by-b"), apiclient.ApplyOptions{FieldManager: "manager-b"})
	if !meta.IsConflict(err) {
		t.Fatalf("conflicting apply: %v, want 409 Conflict", err)
	}
	out, err = cms.Apply(ctx, "applied", cfg("by-b"), apiclient.ApplyOptions{FieldManager: "manager-b", Force: true})
	if err != nil || out.Data["owned"] != "by-b" {
		t.Fatalf("forced apply: %v %v", out, err)
	}
}

func TestAPIClientListPaging(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, func(cfg *apiclient.Config) { cfg.QPS, cfg.Burst = 1000, 1000 })
	ctx := acCtx(t, 5*time.Minute)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns)
	const total = 1200
	names := make(chan string)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range names {
				if _, err := cms.Create(ctx, newCM(n, map[string]string{"n": n}), apiclient.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < total; i++ {
		select {
		case names <- fmt.Sprintf("cm-%04d", i):
		case err := <-errs:
			t.Fatal(err)
		}
	}
	close(names)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	var sizes []int
	opts := apiclient.ListOptions{Limit: 500}
	seen := map[string]bool{}
	for {
		page, err := cms.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Items))
		for _, it := range page.Items {
			seen[it.Name] = true
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if fmt.Sprint(sizes) != "[500 500 200]" || len(seen) != total {
		t.Fatalf("pages %v, %d distinct objects", sizes, len(seen))
	}
	n := 0
	for _, err := range cms.All(ctx, apiclient.ListOptions{Limit: 500}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != total {
		t.Fatalf("All yielded %d objects", n)
	}
}

// TestAPIClientWatchFromResourceVersion: exactly the events after the resourceVersion, in
// order, and the same over WebSocket as over a chunked stream.
func TestAPIClientWatchFromResourceVersion(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 2*time.Minute)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns).WithKind("ConfigMap")
	a, err := cms.Create(ctx, newCM("a", nil), apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := a.ResourceVersion
	var want []string
	b, err := cms.Create(ctx, newCM("b", nil), apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "ADDED b "+b.ResourceVersion)
	a.Data = map[string]string{"k": "v"}
	a2, err := cms.Update(ctx, a, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "MODIFIED a "+a2.ResourceVersion)
	if err := cms.Delete(ctx, "b", apiclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "DELETED b")

	for _, p := range []struct {
		name  string
		proto apiclient.WatchProtocol
	}{{"chunked", apiclient.WatchChunked}, {"websocket", apiclient.WatchWebSocket}} {
		t.Run(p.name, func(t *testing.T) {
			pc := acClient(t, c, func(cfg *apiclient.Config) { cfg.WatchProtocol = p.proto })
			w, err := apiclient.NewResource[*acConfigMap](pc, acConfigMaps).Namespace(ns).WithKind("ConfigMap").
				Watch(ctx, apiclient.ListOptions{ResourceVersion: from, TimeoutSeconds: ptr(int64(60))})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []string
			for len(got) < len(want) {
				ev := acRecv(t, w, 30*time.Second)
				s := string(ev.Type) + " " + ev.Object.Name
				if ev.Type != apiclient.Deleted {
					s += " " + ev.Object.ResourceVersion
				}
				got = append(got, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("events\n got %v\nwant %v", got, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestAPIClientWatchCompacted: a watch from a compacted resourceVersion of the uncached
// resource is a typed 410 (IsResourceExpired), before the stream or as an ERROR event.
func TestAPIClientWatchCompacted(t *testing.T) {
	c := cluster.ForTest(t)
	ctx := acCtx(t, 2*time.Minute)
	for _, proto := range []apiclient.WatchProtocol{apiclient.WatchChunked, apiclient.WatchWebSocket} {
		ac := acClient(t, c, func(cfg *apiclient.Config) { cfg.WatchProtocol = proto })
		ns := acNamespace(t, ac)
		pts := apiclient.NewResource[*meta.Unstructured](ac, acPodTemplates).Namespace(ns)
		pt := &meta.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PodTemplate",
			"metadata": map[string]any{"name": "pt"},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}
		created, err := pts.Create(ctx, pt, apiclient.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.SetLabels(map[string]string{"touched": "yes"})
		if _, err := pts.Update(ctx, created, apiclient.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := pts.Watch(ctx, apiclient.ListOptions{ResourceVersion: created.GetResourceVersion(), TimeoutSeconds: ptr(int64(30))})
		if err != nil {
			if !meta.IsResourceExpired(err) {
				t.Fatalf("protocol %d: watch refused with %v, want 410 Expired", proto, err)
			}
			continue
		}
		ev := acRecv(t, w, 30*time.Second)
		w.Stop()
		if ev.Type != apiclient.Error || !meta.IsResourceExpired(ev.Err) {
			t.Fatalf("protocol %d: event %s err %v, want a 410 Expired ERROR", proto, ev.Type, ev.Err)
		}
		st, _ := meta.AsStatus(ev.Err)
		t.Logf("protocol %d: %d %s: %s", proto, st.Code, st.Reason, st.Message)
	}
}

func TestAPIClientBookmarksAndInitialEvents(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 3*time.Minute)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(ns)
	var last string
	for _, n := range []string{"x", "y", "z"} {
		out, err := cms.Create(ctx, newCM(n, nil), apiclient.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = out.ResourceVersion
	}

	// A streaming list: ADDED for every object, then the initial-events-end bookmark.
	w, err := cms.Watch(ctx, apiclient.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr(int64(60))})
	if err != nil {
		t.Fatal(err)
	}
	added := map[string]bool{}
	for {
		ev := acRecv(t, w, 60*time.Second)
		if ev.Type == apiclient.Added {
			added[ev.Object.Name] = true
			continue
		}
		if ev.Type == apiclient.Bookmark && ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true" {
			endRV, _ := strconv.ParseUint(ev.Object.ResourceVersion, 10, 64)
			lastRV, _ := strconv.ParseUint(last, 10, 64)
			if len(added) != 3 || endRV < lastRV {
				t.Fatalf("end bookmark at %s after %v (last write %s)", ev.Object.ResourceVersion, added, last)
			}
			break
		}
		if ev.Type != apiclient.Bookmark {
			t.Fatalf("unexpected %s before the end bookmark", ev.Type)
		}
	}
	w.Stop()

	// Periodic bookmarks: the watch cache sends one about once a minute, when it has
	// progressed past the last event the watch saw; a write the watch does not match
	// (another namespace) makes that progress.
	w, err = cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: last, AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(100))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	other := acNamespace(t, ac)
	if _, err := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace(other).Create(ctx, newCM("elsewhere", nil), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := acRecv(t, w, 95*time.Second)
		if ev.Type == apiclient.Bookmark {
			if ev.Object.ResourceVersion == "" {
				t.Fatal("bookmark without a resourceVersion")
			}
			t.Logf("bookmark at %s", ev.Object.ResourceVersion)
			return
		}
	}
}

func TestAPIClientCustomResourceAndDiscovery(t *testing.T) {
	c := cluster.ForTest(t)
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 3*time.Minute)
	ns := acNamespace(t, ac)

	// Discovery of built-ins first, so that the CRD below is a cache miss.
	for name, want := range map[string]meta.GroupVersionResource{
		"configmaps":       acConfigMaps,
		"cm":               acConfigMaps,
		"deployments.apps": {Group: "apps", Version: "v1", Resource: "deployments"},
		"deploy":           {Group: "apps", Version: "v1", Resource: "deployments"},
	} {
		r, err := ac.ResolveResource(ctx, name)
		if err != nil || r.GroupVersionResource != want || !r.Namespaced {
			t.Fatalf("resolve %s: %+v %v", name, r, err)
		}
	}

	suffix := time.Now().UnixNano() % 1e6
	group := fmt.Sprintf("e2e%d.informerkit.dev", suffix)
	// The short name is unique too: CRDs of earlier runs on the same cluster (go test -count)
	// stay, and a short name shared by two groups resolves to either.
	shortName := fmt.Sprintf("wdg%d", suffix)
	crdName := "widgets." + group
	crd := &meta.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crdName},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": []any{shortName}},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{
						"size":  map[string]any{"type": "integer"},
						"color": map[string]any{"type": "string"}}}}}}}},
		},
	}}
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	created, err := crds.Create(ctx, crd, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for Established through a watch of the CRD.
	w, err := crds.Watch(ctx, apiclient.ListOptions{FieldSelector: "metadata.name=" + crdName, ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	for established := crdEstablished(created); !established; {
		ev := acRecv(t, w, 60*time.Second)
		established = ev.Type != apiclient.Error && crdEstablished(ev.Object)
	}
	w.Stop()

	r, err := ac.ResolveResource(ctx, shortName)
	if err != nil || r.Group != group || r.Resource != "widgets" || r.Kind != "Widget" || !r.Namespaced {
		t.Fatalf("resolve the CRD by short name: %+v %v", r, err)
	}
	widgets, info, err := apiclient.ResourceFor[*meta.Unstructured](ctx, ac, "widgets."+group)
	if err != nil || info.Version != "v1" {
		t.Fatalf("ResourceFor: %v %v", info, err)
	}
	widgets = widgets.Namespace(ns)
	u := &meta.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(info.GroupVersionKind())
	u.SetName("w1")
	_ = meta.SetNestedField(u.Object, int64(3), "spec", "size")
	_ = meta.SetNestedField(u.Object, "red", "spec", "color")
	out, err := widgets.Create(ctx, u, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := meta.NestedInt64(out.Object, "spec", "size"); size != 3 || out.GetUID() == "" {
		t.Fatalf("created widget %v", out.Object)
	}
	_ = meta.SetNestedField(out.Object, "blue", "spec", "color")
	out, err = widgets.Update(ctx, out, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := meta.NestedString(out.Object, "spec", "color"); color != "blue" {
		t.Fatalf("updated widget %v", out.Object)
	}
	list, err := widgets.List(ctx, apiclient.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w1" {
		t.Fatalf("list widgets: %v", err)
	}
	if _, err := widgets.Patch(ctx, "w1", apiclient.MergePatchType, []byte(`{"spec":{"size":5}}`), apiclient.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := widgets.Delete(ctx, "w1", apiclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.Get(ctx, "w1", apiclient.GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, err := ac.ResolveResource(ctx, "nothing-like-this"); !errors.Is(err, apiclient.ErrUnknownResource) {
		t.Fatalf("unknown resource: %v", err)
	}
}

func crdEstablished(u *meta.Unstructured) bool {
	conds, _, _ := meta.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// TestAPIClientCredentials: a token file (re-read as it changes) and an exec plugin (a
// small script) authenticate against the real server; a wrong token is a typed 401.
func TestAPIClientCredentials(t *testing.T) {
	c := cluster.ForTest(t)
	ctx := acCtx(t, time.Minute)
	dir := t.TempDir()
	list := func(ac *apiclient.Client) error {
		_, err := apiclient.NewResource[*acConfigMap](ac, acConfigMaps).Namespace("default").List(ctx, apiclient.ListOptions{Limit: 1})
		return err
	}

	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("wrong-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ac := acClient(t, c, func(cfg *apiclient.Config) {
		cfg.BearerToken, cfg.BearerTokenFile, cfg.MaxRetries = "", tokenFile, -1
	})
	if err := list(ac); !meta.IsUnauthorized(err) {
		t.Fatalf("wrong token from the file: %v", err)
	}
	if strings.Contains(fmt.Sprint(ac, ac.Host()), "wrong-token") {
		t.Fatal("token in the client's printed form")
	}
	if err := os.WriteFile(tokenFile, []byte(c.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := list(ac); err != nil {
		t.Fatalf("rotated token file: %v", err)
	}

	script := filepath.Join(dir, "credential-plugin.sh")
	plugin := fmt.Sprintf("#!/bin/sh\ncase \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 7 ;; esac\n"+
		"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}'\n",
		c.Token, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if err := os.WriteFile(script, []byte(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	// The plugin is configured through a kubeconfig (relative command path).
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: exec
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: ca.crt
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./credential-plugin.sh
      interactiveMode: Never
contexts:
- name: exec
  context: {cluster: e2e, user: plugin, namespace: default}
`, c.URL)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), c.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kcPath})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Exec == nil || cfg.Exec.Command != script || cfg.Namespace != "default" {
		t.Fatalf("exec config %v", cfg)
	}
	ec, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	if err := list(ec); err != nil {
		t.Fatalf("exec plugin credentials: %v", err)
	}
}
