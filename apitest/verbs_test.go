package apitest_test

import (
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

func TestPatchTypes(t *testing.T) {
	e := newEnv(t)
	if _, err := e.cms.Create(e.ctx, cm("p", map[string]string{"a": "1"}, map[string]string{"x": "1", "y": "2"}), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := e.cms.Patch(e.ctx, "p", apiclient.MergePatchType, []byte(`{"data":{"x":null,"z":"3"}}`), apiclient.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Data["x"]; ok || got.Data["z"] != "3" || got.Data["y"] != "2" {
		t.Fatalf("merge patch result %v", got.Data)
	}
	got, err = e.cms.Patch(e.ctx, "p", apiclient.JSONPatchType, []byte(`[{"op":"test","path":"/data/y","value":"2"},{"op":"replace","path":"/data/y","value":"20"},{"op":"add","path":"/metadata/labels/b","value":"2"},{"op":"remove","path":"/data/z"}]`), apiclient.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["y"] != "20" || got.Labels["b"] != "2" || len(got.Data) != 1 {
		t.Fatalf("json patch result %v %v", got.Data, got.Labels)
	}
	got, err = e.cms.Patch(e.ctx, "p", apiclient.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"a":null}}}`), apiclient.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Labels["a"]; ok {
		t.Fatalf("strategic merge patch result %v", got.Labels)
	}
	// A patch carrying a stale resourceVersion is a precondition: 409.
	_, err = e.cms.Patch(e.ctx, "p", apiclient.MergePatchType, []byte(`{"metadata":{"resourceVersion":"2"},"data":{"q":"1"}}`), apiclient.PatchOptions{})
	mustStatus(t, err, 409, meta.StatusReasonConflict)
	_, err = e.cms.Patch(e.ctx, "missing", apiclient.MergePatchType, []byte(`{}`), apiclient.PatchOptions{})
	mustStatus(t, err, 404, meta.StatusReasonNotFound)
	_, err = e.cms.Patch(e.ctx, "p", apiclient.JSONPatchType, []byte(`not json`), apiclient.PatchOptions{})
	mustStatus(t, err, 400, meta.StatusReasonBadRequest)
}

func TestStatusSubresourceAndGeneration(t *testing.T) {
	e := newEnv(t)
	deps := apiclient.NewResource[*Deployment](e.c, deploymentsGVR).Namespace("default")
	d := &Deployment{ObjectMeta: meta.ObjectMeta{Name: "d"}, Spec: map[string]any{"replicas": 1,
		"selector": map[string]any{"matchLabels": map[string]any{"app": "d"}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "d"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
		Status: map[string]any{"readyReplicas": 5}}
	got, err := deps.Create(e.ctx, d, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || len(got.Status) != 0 {
		t.Fatalf("generation on create %d, status %v (the server resets it)", got.Generation, got.Status)
	}
	// Status change through /status: generation stays.
	got.Status = map[string]any{"observedGeneration": 1}
	st, err := deps.UpdateStatus(e.ctx, got, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation != 1 || st.Status["observedGeneration"] == nil {
		t.Fatalf("after status update: gen %d status %v", st.Generation, st.Status)
	}
	// Spec change through the main resource: generation bumps, status is kept.
	st.Spec["replicas"] = 3
	st.Status = map[string]any{"readyReplicas": 7}
	up, err := deps.Update(e.ctx, st, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if up.Generation != 2 || up.Status["readyReplicas"] != nil || up.Status["observedGeneration"] == nil {
		t.Fatalf("after spec update: gen %d status %v", up.Generation, up.Status)
	}
	// Metadata-only change: generation stays.
	up.Labels = map[string]string{"x": "y"}
	md, err := deps.Update(e.ctx, up, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if md.Generation != 2 {
		t.Fatalf("label change bumped generation to %d", md.Generation)
	}
	// A status update of /status ignores spec changes.
	md.Spec["replicas"] = 9
	md.Status = map[string]any{"replicas": 3}
	st2, err := deps.UpdateStatus(e.ctx, md, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Spec["replicas"] != float64(3) || st2.Generation != 2 {
		t.Fatalf("status update changed spec: %v gen %d", st2.Spec, st2.Generation)
	}
	// Configmaps have no generation.
	c, _ := e.s.Create("configmaps", cm("c", nil, nil))
	if c.Generation() != 0 {
		t.Fatalf("configmap generation %d", c.Generation())
	}
}

func TestDeleteWithFinalizersAndPreconditions(t *testing.T) {
	e := newEnv(t)
	obj := cm("f", nil, nil)
	obj.Finalizers = []string{"example.com/hold"}
	created, err := e.cms.Create(e.ctx, obj, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	wrongUID := "nope"
	err = e.cms.Delete(e.ctx, "f", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{UID: &wrongUID}})
	st := mustStatus(t, err, 409, meta.StatusReasonConflict)
	if st.Message != `Operation cannot be fulfilled on ConfigMap "f": the UID in the precondition (nope) does not match the UID in record (`+created.UID+`). The object might have been deleted and then recreated` {
		t.Fatalf("precondition message %q", st.Message)
	}
	staleRV := "1"
	err = e.cms.Delete(e.ctx, "f", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{ResourceVersion: &staleRV}})
	mustStatus(t, err, 409, meta.StatusReasonConflict)

	if err := e.cms.Delete(e.ctx, "f", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{UID: &created.UID}}); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	if ev.Type != apiclient.Modified || ev.Object.DeletionTimestamp == nil {
		t.Fatalf("expected MODIFIED with deletionTimestamp, got %s %+v", ev.Type, ev.Object.ObjectMeta)
	}
	got, err := e.cms.Get(e.ctx, "f", apiclient.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("object with finalizer must still exist with deletionTimestamp: %v %+v", err, got)
	}
	// No new finalizers while deleting.
	got.Finalizers = append(got.Finalizers, "another")
	_, err = e.cms.Update(e.ctx, got, apiclient.UpdateOptions{})
	mustStatus(t, err, 422, meta.StatusReasonInvalid)

	got.Finalizers = nil
	resp, err := e.cms.Update(e.ctx, got, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As the kube-apiserver: the response is the updated object at its old RV, and one
	// DELETED event carries the stored state (with its finalizer) at a new RV.
	if len(resp.Finalizers) != 0 || resp.ResourceVersion != got.ResourceVersion {
		t.Fatalf("response %+v", resp.ObjectMeta)
	}
	del := next(t, w)
	if del.Type != apiclient.Deleted || del.Object.Name != "f" || len(del.Object.Finalizers) != 1 {
		t.Fatalf("expected DELETED with the last stored state, got %s %+v", del.Type, del.Object.ObjectMeta)
	}
	r1, _ := strconv.Atoi(got.ResourceVersion)
	r2, _ := strconv.Atoi(del.Object.ResourceVersion)
	if r2 <= r1 {
		t.Fatalf("DELETED RV %d not after the last RV %d", r2, r1)
	}
	if _, err := e.cms.Get(e.ctx, "f", apiclient.GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("object still there: %v", err)
	}
}

func TestSelectors(t *testing.T) {
	e := newEnv(t)
	for i, env := range []string{"prod", "dev", "test", ""} {
		labels := map[string]string{"n": strconv.Itoa(i)}
		if env != "" {
			labels["env"] = env
		}
		e.s.Create("configmaps", cm("c"+strconv.Itoa(i), labels, nil))
	}
	cases := map[string][]string{
		"env=prod":             {"c0"},
		"env==prod":            {"c0"},
		"env!=prod":            {"c1", "c2", "c3"},
		"env in (dev, test)":   {"c1", "c2"},
		"env notin (dev,test)": {"c0", "c3"},
		"env":                  {"c0", "c1", "c2"},
		"!env":                 {"c3"},
		"env,n=1":              {"c1"},
		"n>1":                  {"c2", "c3"},
	}
	for sel, want := range cases {
		l, err := e.cms.List(e.ctx, apiclient.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		var names []string
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		if len(names) != len(want) {
			t.Fatalf("selector %q: got %v want %v", sel, names, want)
		}
		for i := range want {
			if names[i] != want[i] {
				t.Fatalf("selector %q: got %v want %v", sel, names, want)
			}
		}
	}
	for sel, want := range map[string][]string{"metadata.name=c1": {"c1"}, "metadata.name!=c1,metadata.namespace==default": {"c0", "c2", "c3"}} {
		l, err := e.cms.List(e.ctx, apiclient.ListOptions{FieldSelector: sel})
		if err != nil || len(l.Items) != len(want) {
			t.Fatalf("field selector %q: %v %d items", sel, err, len(l.Items))
		}
	}
	_, err := e.cms.List(e.ctx, apiclient.ListOptions{FieldSelector: "spec.foo=bar"})
	st := mustStatus(t, err, 400, meta.StatusReasonBadRequest)
	if st.Message != `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Fatalf("message %q", st.Message)
	}
	_, err = e.cms.List(e.ctx, apiclient.ListOptions{LabelSelector: "a in (b"})
	mustStatus(t, err, 400, meta.StatusReasonBadRequest)
}

func TestPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 10 {
		e.s.Create("configmaps", cm("c"+strconv.Itoa(i), nil, nil))
	}
	first, err := e.cms.List(e.ctx, apiclient.ListOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 4 || first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 6 {
		t.Fatalf("first page: %d items continue %q remaining %v", len(first.Items), first.Continue, first.RemainingItemCount)
	}
	// resourceVersion=0 is answered from the "cache": limit is ignored, as by the
	// kube-apiserver.
	all, err := e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: "0", Limit: 4})
	if err != nil || len(all.Items) != 10 || all.Continue != "" {
		t.Fatalf("rv=0 limit=4: %v, %d items, continue %q", err, len(all.Items), all.Continue)
	}
	// Changes after the first page do not show up in later pages: the snapshot is kept.
	e.s.Create("configmaps", cm("c99", nil, nil))
	e.s.Delete("configmaps", "default", "c8")
	var names []string
	for _, it := range first.Items {
		names = append(names, it.Name)
	}
	cont := first.Continue
	for cont != "" {
		page, err := e.cms.List(e.ctx, apiclient.ListOptions{Limit: 4, Continue: cont})
		if err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page RV %s, first page RV %s", page.ResourceVersion, first.ResourceVersion)
		}
		for _, it := range page.Items {
			names = append(names, it.Name)
		}
		cont = page.Continue
	}
	want := []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	if len(names) != len(want) {
		t.Fatalf("paged names %v", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("paged names %v", names)
		}
	}
	// After a compaction the token has expired.
	second, _ := e.cms.List(e.ctx, apiclient.ListOptions{Limit: 2})
	e.s.Create("configmaps", cm("late", nil, nil))
	if err := e.s.Compact(""); err != nil {
		t.Fatal(err)
	}
	_, err = e.cms.List(e.ctx, apiclient.ListOptions{Limit: 2, Continue: second.Continue})
	st := mustStatus(t, err, 410, meta.StatusReasonExpired)
	if st.Message == "" || st.ListMeta.Continue == "" {
		t.Fatalf("expired continue: message %q, new continue %q", st.Message, st.ListMeta.Continue)
	}
	if !meta.IsResourceExpired(err) {
		t.Fatal("IsResourceExpired is false")
	}
	// Exact reads.
	_, err = e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: apiclient.ResourceVersionMatchExact})
	mustStatus(t, err, 410, meta.StatusReasonExpired)
	// Bad option combinations.
	_, err = e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersionMatch: apiclient.ResourceVersionMatchExact})
	mustStatus(t, err, 422, meta.StatusReasonInvalid)
	_, err = e.cms.List(e.ctx, apiclient.ListOptions{Continue: "garbage"})
	mustStatus(t, err, 400, meta.StatusReasonBadRequest)
}

func TestDeleteCollection(t *testing.T) {
	e := newEnv(t)
	e.s.Create("configmaps", cm("a", map[string]string{"gone": "yes"}, nil))
	e.s.Create("configmaps", cm("b", map[string]string{"gone": "yes"}, nil))
	e.s.Create("configmaps", cm("c", nil, nil))
	if err := e.cms.DeleteCollection(e.ctx, apiclient.DeleteOptions{}, apiclient.ListOptions{LabelSelector: "gone=yes"}); err != nil {
		t.Fatal(err)
	}
	objs, _, _ := e.s.List("configmaps", "default")
	if len(objs) != 1 || objs[0].Name() != "c" {
		t.Fatalf("left %v", objs)
	}
}

func TestListExactSnapshot(t *testing.T) {
	e := newEnv(t)
	a, _ := e.s.Create("configmaps", cm("a", nil, map[string]string{"v": "1"}))
	e.s.Mutate("configmaps", "default", "a", func(o apitest.Object) { o["data"] = map[string]any{"v": "2"} })
	e.s.Create("configmaps", cm("b", nil, nil))
	l, err := e.cms.List(e.ctx, apiclient.ListOptions{ResourceVersion: a.ResourceVersion(), ResourceVersionMatch: apiclient.ResourceVersionMatchExact})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Data["v"] != "1" || l.ResourceVersion != a.ResourceVersion() {
		t.Fatalf("exact list at %s: %+v", a.ResourceVersion(), l)
	}
	// A resourceVersion from the future: 504 with the ResourceVersionTooLarge cause.
	s := apitest.NewServerWithOptions(apitest.Options{TooLargeResourceVersionWait: -1})
	defer s.Close()
	c, _ := apiclient.New(&apiclient.Config{Host: s.URL, MaxRetries: -1})
	defer c.Close()
	_, err = apiclient.NewResource[*ConfigMap](c, configmapsGVR).List(e.ctx, apiclient.ListOptions{ResourceVersion: "999999", ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan})
	mustStatus(t, err, 504, meta.StatusReasonTimeout)
	if !meta.IsTooLargeResourceVersion(err) {
		t.Fatalf("not a too-large-RV error: %v", err)
	}
}

func TestMutateWritesStatus(t *testing.T) {
	e := newEnv(t)
	if _, err := e.s.Create("pods", map[string]any{"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := e.s.Mutate("pods", "default", "p", func(o apitest.Object) {
		o["status"] = map[string]any{"phase": "Running", "podIP": "10.1.2.3"}
		o["metadata"].(map[string]any)["labels"] = map[string]any{"ran": "yes"}
	})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := e.s.Get("pods", "default", "p")
	for _, o := range []apitest.Object{got, stored} {
		st, _ := o["status"].(map[string]any)
		if st["phase"] != "Running" || st["podIP"] != "10.1.2.3" || o.Labels()["ran"] != "yes" {
			t.Fatalf("Mutate lost the status or labels: %v", o)
		}
	}
}

func TestDeletionTimestampBumpsGeneration(t *testing.T) {
	e := newEnv(t)
	if _, err := e.s.Create("pods", map[string]any{"metadata": map[string]any{"name": "p", "finalizers": []any{"example.com/hold"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Delete("pods", "default", "p"); err != nil {
		t.Fatal(err)
	}
	got, _ := e.s.Get("pods", "default", "p")
	if got.Generation() != 2 || got["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Fatalf("after delete with a finalizer: generation %d, metadata %v", got.Generation(), got["metadata"])
	}
}
