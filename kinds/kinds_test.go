package kinds_test

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// partialPod is a second Go type for kind Pod, beside testobj.Pod.
type partialPod struct {
	meta.ObjectMeta `json:"metadata"`
}

func TestRegisterAndLookup(t *testing.T) {
	r := kinds.NewRegistry()
	if err := r.Register(reflect.TypeFor[*testobj.Pod](), kinds.Pod); err != nil {
		t.Fatal(err)
	}
	// Two Go types may hold one kind.
	if err := r.Register(reflect.TypeFor[*partialPod](), kinds.Pod); err != nil {
		t.Fatal(err)
	}
	// Registering again with the same Info is a no-op.
	if err := r.Register(reflect.TypeFor[*testobj.Pod](), kinds.Pod); err != nil {
		t.Fatal(err)
	}
	var conflict *kinds.ConflictError
	if err := r.Register(reflect.TypeFor[*testobj.Pod](), kinds.ConfigMap); !errors.As(err, &conflict) || conflict.Registered != kinds.Pod {
		t.Fatalf("re-registering as another kind: %v", err)
	}
	if info, ok := r.Lookup(reflect.TypeFor[*partialPod]()); !ok || info != kinds.Pod {
		t.Fatalf("Lookup = %v, %v", info, ok)
	}
	if _, err := kinds.InfoForIn[*testobj.Widget](r); !errors.Is(err, kinds.ErrNotRegistered) {
		t.Fatalf("unregistered type: %v", err)
	}
	if len(r.Types()) != 2 {
		t.Fatalf("Types() = %v", r.Types())
	}
}

func TestRegisterRejectsBadInput(t *testing.T) {
	r := kinds.NewRegistry()
	for _, info := range []kinds.Info{{}, {Version: "v1", Kind: "X"}, {Version: "v1", Kind: "X", Resource: "Xs"}, {Group: "a/b", Version: "v1", Kind: "X", Resource: "xs"}} {
		if err := r.Register(reflect.TypeFor[*testobj.Widget](), info); err == nil {
			t.Errorf("Register(%+v) succeeded", info)
		}
	}
	if err := r.Register(reflect.TypeFor[*meta.Unstructured](), kinds.Pod); err == nil {
		t.Error("Unstructured registered")
	}
	if err := r.Register(nil, kinds.Pod); err == nil {
		t.Error("nil type registered")
	}
}

func TestInfoOf(t *testing.T) {
	r := kinds.NewRegistry()
	if err := r.Register(reflect.TypeFor[*testobj.Widget](), testobj.WidgetInfo); err != nil {
		t.Fatal(err)
	}
	// Registered: from the registry, whatever the object carries.
	if info, err := r.InfoOf(&testobj.Widget{}); err != nil || info != testobj.WidgetInfo {
		t.Fatalf("registered: %v, %v", info, err)
	}
	// Unstructured: from its apiVersion and kind, completed from the built-in table.
	u := &meta.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	if info, err := r.InfoOf(u); err != nil || info != kinds.Deployment {
		t.Fatalf("unstructured built-in: %v, %v", info, err)
	}
	u = &meta.Unstructured{Object: map[string]any{"apiVersion": "example.com/v2", "kind": "Gadget"}}
	if info, err := r.InfoOf(u); err != nil || info.APIVersion() != "example.com/v2" || info.Kind != "Gadget" || info.Resource != "" {
		t.Fatalf("unstructured custom: %v, %v", info, err)
	}
	// Unregistered typed object with TypeMeta (a Get response carries it).
	if info, err := r.InfoOf(&testobj.Pod{TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "Pod"}}); err != nil || info != kinds.Pod {
		t.Fatalf("typed with TypeMeta: %v, %v", info, err)
	}
	// Unregistered, no TypeMeta: a typed error naming the type.
	var nre *kinds.NotRegisteredError
	if _, err := r.InfoOf(&testobj.Pod{}); !errors.As(err, &nre) || nre.Type != reflect.TypeFor[*testobj.Pod]() {
		t.Fatalf("unregistered without TypeMeta: %v", err)
	}
	if _, err := r.InfoOf(nil); err == nil {
		t.Fatal("InfoOf(nil) succeeded")
	}
}

func TestInfoMethods(t *testing.T) {
	if kinds.Deployment.APIVersion() != "apps/v1" || kinds.Pod.APIVersion() != "v1" {
		t.Fatal("APIVersion")
	}
	if kinds.Deployment.GroupVersionResource() != (meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) {
		t.Fatal("GroupVersionResource")
	}
	if (kinds.Deployment.TypeMeta() != meta.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}) {
		t.Fatal("TypeMeta")
	}
	if kinds.Pod.String() != "Pod.v1" || kinds.Deployment.String() != "Deployment.v1.apps" {
		t.Fatal(kinds.Pod.String(), kinds.Deployment.String())
	}
}

func TestBuiltinTable(t *testing.T) {
	seenGVR := map[meta.GroupVersionResource]bool{}
	for _, i := range kinds.Builtin() {
		if err := i.Validate(); err != nil {
			t.Error(err)
		}
		if seenGVR[i.GroupVersionResource()] {
			t.Errorf("duplicate %v", i.GroupVersionResource())
		}
		seenGVR[i.GroupVersionResource()] = true
		if got, ok := kinds.BuiltinForResource(i.GroupVersionResource()); !ok || got != i {
			t.Errorf("BuiltinForResource(%v) = %v", i.GroupVersionResource(), got)
		}
		if got, ok := kinds.BuiltinForKind(i.GroupVersionKind()); !ok || got != i {
			t.Errorf("BuiltinForKind(%v) = %v", i.GroupVersionKind(), got)
		}
	}
	if _, ok := kinds.BuiltinForResource(meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); ok {
		t.Error("a custom resource is built in")
	}
	b := kinds.Builtin()
	b[0].Kind = "Changed"
	if kinds.Builtin()[0].Kind == "Changed" {
		t.Error("Builtin returns the table itself")
	}
}

func TestConcurrentRegistry(t *testing.T) {
	r := kinds.NewRegistry()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = r.Register(reflect.TypeFor[*testobj.Pod](), kinds.Pod)
			_, _ = r.InfoOf(&testobj.Pod{})
		})
	}
	wg.Wait()
}

func TestMustRegisterPanicsOnConflict(t *testing.T) {
	type local struct{ meta.ObjectMeta }
	kinds.MustRegister[*local](kinds.ConfigMap)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	kinds.MustRegister[*local](kinds.Secret)
}
