package controllerutil

import (
	"errors"
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

type replicaSet struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

type clusterThing struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var clusterThingInfo = kinds.Info{Group: "example.com", Version: "v1", Kind: "ClusterThing", Resource: "clusterthings"}

func init() {
	kinds.MustRegister[*replicaSet](kinds.ReplicaSet)
	kinds.MustRegister[*testobj.Pod](kinds.Pod)
	kinds.MustRegister[*clusterThing](clusterThingInfo)
}

func rs(ns, name, uid string) *replicaSet {
	return &replicaSet{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
}

func TestSetControllerReference(t *testing.T) {
	owner := rs("default", "web", "uid-1")
	p := testobj.NewPod("default", "web-x")
	if err := SetControllerReference(owner, p); err != nil {
		t.Fatal(err)
	}
	yes := true
	want := []meta.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-1", Controller: &yes, BlockOwnerDeletion: &yes}}
	if !reflect.DeepEqual(p.OwnerReferences, want) {
		t.Fatalf("refs = %+v", p.OwnerReferences)
	}
	if c := GetControllerOf(p); c == nil || c.UID != "uid-1" || !IsControlledBy(p, owner) || !HasControllerReference(p) {
		t.Fatalf("GetControllerOf = %+v", c)
	}
	// Again, with the owner re-created (new uid, same name): the reference is updated, not
	// duplicated.
	if err := SetControllerReference(rs("default", "web", "uid-2"), p); err != nil {
		t.Fatal(err)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "uid-2" {
		t.Fatalf("refs = %+v", p.OwnerReferences)
	}
	// Another controller: refused, nothing changed.
	var owned *AlreadyOwnedError
	err := SetControllerReference(rs("default", "other", "uid-3"), p)
	if !errors.As(err, &owned) || owned.Owner.Name != "web" || owned.Object != "default/web-x" {
		t.Fatalf("second controller: %v", err)
	}
	if len(p.OwnerReferences) != 1 {
		t.Fatalf("refs changed on error: %+v", p.OwnerReferences)
	}
	// A plain owner reference may be added next to the controller.
	if err := SetOwnerReference(rs("default", "other", "uid-3"), p); err != nil {
		t.Fatal(err)
	}
	if len(p.OwnerReferences) != 2 || p.OwnerReferences[1].Controller != nil || p.OwnerReferences[1].BlockOwnerDeletion != nil {
		t.Fatalf("refs = %+v", p.OwnerReferences)
	}
	if !HasOwnerReference(rs("", "", "uid-3"), p) || HasOwnerReference(rs("", "", "uid-9"), p) {
		t.Fatal("HasOwnerReference")
	}
	if !RemoveOwnerReference(rs("", "", "uid-3"), p) || RemoveOwnerReference(rs("", "", "uid-3"), p) || len(p.OwnerReferences) != 1 {
		t.Fatalf("RemoveOwnerReference: %+v", p.OwnerReferences)
	}
}

func TestOwnerReferenceRules(t *testing.T) {
	cases := []struct {
		name   string
		owner  meta.Accessor
		object meta.Accessor
		want   error
	}{
		{"cross-namespace", rs("a", "o", "u"), testobj.NewPod("b", "p"), ErrCrossNamespaceOwner},
		{"cluster-scoped object, namespaced owner", rs("a", "o", "u"), &clusterThing{ObjectMeta: meta.ObjectMeta{Name: "c"}}, ErrNamespacedOwnerOfClusterScoped},
		{"owner never created", rs("a", "o", ""), testobj.NewPod("a", "p"), ErrOwnerNotPersisted},
		{"unregistered owner", &struct{ meta.ObjectMeta }{meta.ObjectMeta{Namespace: "a", Name: "o", UID: "u"}}, testobj.NewPod("a", "p"), kinds.ErrNotRegistered},
	}
	for _, tc := range cases {
		for name, set := range map[string]func(o, x meta.Accessor) error{"controller": SetControllerReference, "owner": SetOwnerReference} {
			err := set(tc.owner, tc.object)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s (%s): err = %v, want %v", tc.name, name, err, tc.want)
			}
			if tc.object.GetOwnerReferences() != nil {
				t.Errorf("%s (%s): refs set despite the error", tc.name, name)
			}
		}
	}
	// A cluster-scoped owner may own namespaced and cluster-scoped objects.
	owner := &clusterThing{ObjectMeta: meta.ObjectMeta{Name: "c", UID: "u"}}
	for _, obj := range []meta.Accessor{testobj.NewPod("x", "p"), &clusterThing{ObjectMeta: meta.ObjectMeta{Name: "d"}}} {
		if err := SetControllerReference(owner, obj); err != nil {
			t.Errorf("cluster-scoped owner: %v", err)
		}
		if r := GetControllerOf(obj); r == nil || r.APIVersion != "example.com/v1" || r.Kind != "ClusterThing" {
			t.Errorf("ref = %+v", r)
		}
	}
}

func TestOwnerReferenceOptionsAndUnstructured(t *testing.T) {
	reg := kinds.NewRegistry()
	type local struct {
		meta.ObjectMeta `json:"metadata"`
	}
	if err := reg.Register(reflect.TypeFor[*local](), kinds.Deployment); err != nil {
		t.Fatal(err)
	}
	no := false
	obj := &meta.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": map[string]any{"namespace": "n", "name": "r"}}}
	err := SetControllerReferenceWithOptions(&local{meta.ObjectMeta{Namespace: "n", Name: "d", UID: "u"}}, obj,
		OwnerReferenceOptions{Registry: reg, BlockOwnerDeletion: &no})
	if err != nil {
		t.Fatal(err)
	}
	r := GetControllerOf(obj)
	if r == nil || r.Kind != "Deployment" || r.APIVersion != "apps/v1" || r.BlockOwnerDeletion == nil || *r.BlockOwnerDeletion {
		t.Fatalf("ref = %+v", r)
	}
	// An Unstructured owner names its own kind.
	owner := &meta.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"namespace": "n", "name": "g", "uid": "ug"}}}
	if err := SetOwnerReference(owner, obj); err != nil {
		t.Fatal(err)
	}
	if refs := obj.GetOwnerReferences(); len(refs) != 2 || refs[1].Kind != "Gadget" || refs[1].APIVersion != "example.com/v1" {
		t.Fatalf("refs = %+v", refs)
	}
}

func TestOwnerReferencesNotChangedInPlace(t *testing.T) {
	shared := []meta.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "old"}}
	p := &testobj.Pod{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "p", OwnerReferences: shared}}
	if err := SetControllerReference(rs("default", "web", "new"), p); err != nil {
		t.Fatal(err)
	}
	if shared[0].UID != "old" || shared[0].Controller != nil {
		t.Fatal("the slice the object held was changed in place (it may be a cache's)")
	}
}

func TestFinalizers(t *testing.T) {
	shared := []string{"a"}
	p := &testobj.Pod{ObjectMeta: meta.ObjectMeta{Finalizers: shared[:1:1]}}
	if ContainsFinalizer(p, "b") || !AddFinalizer(p, "b") || AddFinalizer(p, "b") || !ContainsFinalizer(p, "b") {
		t.Fatal("AddFinalizer/ContainsFinalizer")
	}
	if !reflect.DeepEqual(p.Finalizers, []string{"a", "b"}) || shared[0] != "a" {
		t.Fatalf("finalizers = %v", p.Finalizers)
	}
	before := p.Finalizers
	if !RemoveFinalizer(p, "a") || RemoveFinalizer(p, "a") || !reflect.DeepEqual(p.Finalizers, []string{"b"}) || before[0] != "a" {
		t.Fatalf("RemoveFinalizer: %v (before %v)", p.Finalizers, before)
	}
	if !RemoveFinalizer(p, "b") || p.Finalizers != nil {
		t.Fatalf("last finalizer: %v", p.Finalizers)
	}
	if IsBeingDeleted(p) {
		t.Fatal("IsBeingDeleted")
	}
	u := &meta.Unstructured{Object: map[string]any{}}
	if !AddFinalizer(u, "x") || !ContainsFinalizer(u, "x") || !RemoveFinalizer(u, "x") || u.GetFinalizers() != nil {
		t.Fatal("Unstructured finalizers")
	}
}
