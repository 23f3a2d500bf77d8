package apitest_test

import (
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

func TestCreateGetUpdateDelete(t *testing.T) {
	e := newEnv(t)
	created, err := e.cms.Create(e.ctx, cm("a", map[string]string{"app": "x"}, map[string]string{"k": "v"}), apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("server fields not set: %+v", created.ObjectMeta)
	}
	if created.Kind != "ConfigMap" || created.APIVersion != "v1" {
		t.Fatalf("type meta %+v", created.TypeMeta)
	}
	got, err := e.cms.Get(e.ctx, "a", apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["k"] != "v" || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get %+v", got)
	}

	_, err = e.cms.Create(e.ctx, cm("a", nil, nil), apiclient.CreateOptions{})
	st := mustStatus(t, err, 409, meta.StatusReasonAlreadyExists)
	if st.Message != `configmaps "a" already exists` || st.Details.Name != "a" || st.Details.Kind != "configmaps" {
		t.Fatalf("AlreadyExists body %+v %+v", st, st.Details)
	}

	got.Data["k"] = "w"
	updated, err := e.cms.Update(e.ctx, got, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == got.ResourceVersion || updated.UID != created.UID {
		t.Fatalf("update did not bump RV or changed uid: %+v", updated.ObjectMeta)
	}
	// The stale copy conflicts.
	got.Data["k"] = "stale"
	_, err = e.cms.Update(e.ctx, got, apiclient.UpdateOptions{})
	st = mustStatus(t, err, 409, meta.StatusReasonConflict)
	want := `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`
	if st.Message != want {
		t.Fatalf("conflict message %q", st.Message)
	}
	// An update that changes nothing keeps the resourceVersion.
	same, err := e.cms.Update(e.ctx, updated, apiclient.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("no-op update bumped RV %s -> %s", updated.ResourceVersion, same.ResourceVersion)
	}

	if err := e.cms.Delete(e.ctx, "a", apiclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.cms.Get(e.ctx, "a", apiclient.GetOptions{})
	st = mustStatus(t, err, 404, meta.StatusReasonNotFound)
	if st.Message != `configmaps "a" not found` {
		t.Fatalf("not found message %q", st.Message)
	}
	err = e.cms.Delete(e.ctx, "a", apiclient.DeleteOptions{})
	mustStatus(t, err, 404, meta.StatusReasonNotFound)
}

func TestGenerateNameAndInvalid(t *testing.T) {
	e := newEnv(t)
	obj := &ConfigMap{ObjectMeta: meta.ObjectMeta{GenerateName: "gen-"}}
	got, err := e.cms.Create(e.ctx, obj, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Name) != len("gen-")+5 || got.Name[:4] != "gen-" {
		t.Fatalf("generated name %q", got.Name)
	}
	_, err = e.cms.Create(e.ctx, &ConfigMap{}, apiclient.CreateOptions{})
	st := mustStatus(t, err, 422, meta.StatusReasonInvalid)
	if st.Message != `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required` {
		t.Fatalf("invalid message %q", st.Message)
	}
	_, err = e.cms.Create(e.ctx, cm("Bad_Name", nil, nil), apiclient.CreateOptions{})
	st = mustStatus(t, err, 422, meta.StatusReasonInvalid)
	if len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "metadata.name" || st.Details.Causes[0].Type != "FieldValueInvalid" {
		t.Fatalf("invalid causes %+v", st.Details)
	}
}

func TestNamespaceMustExist(t *testing.T) {
	e := newEnv(t)
	other := apiclient.NewResource[*ConfigMap](e.c, configmapsGVR).Namespace("nope")
	_, err := other.Create(e.ctx, &ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "a"}}, apiclient.CreateOptions{})
	st := mustStatus(t, err, 404, meta.StatusReasonNotFound)
	if st.Message != `namespaces "nope" not found` {
		t.Fatalf("message %q", st.Message)
	}
	if _, err := e.s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "nope"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(e.ctx, &ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "a"}}, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleting the namespace deletes what is in it.
	if err := e.s.Delete("namespaces", "", "nope"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Get("configmaps", "nope", "a"); !meta.IsNotFound(err) {
		t.Fatalf("configmap survived its namespace: %v", err)
	}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		if _, err := e.s.Create("cm", cm("c"+strconv.Itoa(i), map[string]string{"i": strconv.Itoa(i)}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := e.cms.List(e.ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 5 || l.ResourceVersion != e.s.ResourceVersion() || l.Kind != "ConfigMapList" {
		t.Fatalf("list: %d items at %q (server %s) kind %q", len(l.Items), l.ResourceVersion, e.s.ResourceVersion(), l.Kind)
	}
	for i, it := range l.Items {
		if it.Name != "c"+strconv.Itoa(i) {
			t.Fatalf("item %d is %s: lists are sorted by key", i, it.Name)
		}
	}
	reqs := e.s.RequestsFor(apitest.VerbList, "configmaps")
	if len(reqs) != 1 || reqs[0].Namespace != "default" || reqs[0].Code != 200 {
		t.Fatalf("request log %+v", reqs)
	}
}

// Mutate that removes the last finalizer of an object being deleted deletes it and returns
// its last state, as the PUT that does it answers 200; a resource with a status
// subresource and a status (a Pod) behaves as one without (a ConfigMap).
func TestMutateRemovesLastFinalizer(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	for _, c := range []struct {
		resource string
		obj      map[string]any
	}{
		{"configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c", "finalizers": []any{"example.com/f"}}}},
		{"pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "p", "finalizers": []any{"example.com/f"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}},
	} {
		o, err := s.Create(c.resource, c.obj)
		if err != nil {
			t.Fatal(err)
		}
		if c.resource == "pods" {
			running, err := s.Mutate("pods", "default", "p", func(o apitest.Object) { o["status"] = map[string]any{"phase": "Running"} })
			if err != nil || running["status"].(map[string]any)["phase"] != "Running" {
				t.Fatalf("setting the pod's status: %v %v", running, err)
			}
		}
		if err := s.Delete(c.resource, "default", o.Name()); err != nil {
			t.Fatal(err)
		}
		last, err := s.Mutate(c.resource, "default", o.Name(), func(o apitest.Object) {
			o["metadata"].(map[string]any)["finalizers"] = nil
		})
		if err != nil {
			t.Errorf("%s: Mutate that removes the last finalizer: %v", c.resource, err)
			continue
		}
		if last.Name() != o.Name() || last["metadata"].(map[string]any)["deletionTimestamp"] == nil {
			t.Errorf("%s: Mutate returned %v, want the last state, being deleted", c.resource, last)
		}
		if _, err := s.Get(c.resource, "default", o.Name()); !meta.IsNotFound(err) {
			t.Errorf("%s: still there after its last finalizer went: %v", c.resource, err)
		}
	}
}
