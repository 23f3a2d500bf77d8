package client

import (
	"errors"
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// patchPod is what these tests read of a Pod: its containers, merged by name by a
// strategic merge patch.
type patchPod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

// A merge patch with the optimistic lock is refused (409) once someone else changed the
// object after it was read; without the lock it applies and keeps the other change.
func TestPatchFromOptimisticLock(t *testing.T) {
	for _, pt := range []PatchType{MergePatchType, JSONPatchType, StrategicMergePatchType} {
		t.Run(string(pt), func(t *testing.T) {
			e := newEnv(t, Options{})
			ctx := ctxT(t)
			if _, err := e.srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "a", "name": "cm"}, "data": map[string]any{"k": "v"}}); err != nil {
				t.Fatal(err)
			}
			read, err := e.cms.Get(ctx, "a", "cm", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.srv.Mutate("configmaps", "a", "cm", func(o apitest.Object) { o["data"].(map[string]any)["other"] = "theirs" }); err != nil {
				t.Fatal(err)
			}
			mine := DeepCopy(read)
			mine.Data["k"] = "mine"
			if _, err := e.cms.PatchFrom(ctx, pt, read, mine, PatchFromOptions{OptimisticLock: true}); !meta.IsConflict(err) {
				t.Fatalf("locked patch over a newer object: %v, want a 409 Conflict", err)
			}
			got, err := e.cms.PatchFrom(ctx, pt, read, mine, PatchFromOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"k": "mine", "other": "theirs"}; !reflect.DeepEqual(got.Data, want) {
				t.Fatalf("data %v, want %v", got.Data, want)
			}
			// Read your writes: the cache shows the patch.
			if back, err := e.cms.Get(ctx, "a", "cm", GetOptions{}); err != nil || back.Data["k"] != "mine" {
				t.Fatalf("read back %+v, %v", back, err)
			}
			// Nothing changed: nothing is sent.
			before := e.srv.CountRequests(apitest.VerbPatch, "configmaps")
			if same, err := e.cms.PatchFrom(ctx, pt, got, DeepCopy(got), PatchFromOptions{OptimisticLock: true}); err != nil || same != got {
				t.Fatalf("empty patch: %v, %v", same, err)
			}
			if n := e.srv.CountRequests(apitest.VerbPatch, "configmaps"); n != before {
				t.Fatalf("%d patches sent for no change", n-before)
			}
		})
	}
}

// A strategic merge patch names the changed container by its merge key: a container added
// by someone else meanwhile stays, where a merge patch replaces the list.
func TestStrategicMergePatchMergesLists(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := ctxT(t)
	reg := e.c.opts.Registry
	if err := reg.Register(reflect.TypeFor[*patchPod](), kinds.Pod); err != nil {
		t.Fatal(err)
	}
	pods := TypedFor[*patchPod](e.c)
	if _, err := e.srv.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "a", "name": "p"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}}); err != nil {
		t.Fatal(err)
	}
	read, err := pods.Get(ctx, "a", "p", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.Mutate("pods", "a", "p", func(o apitest.Object) {
		spec := o["spec"].(map[string]any)
		spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "theirs", "image": "theirs:1"})
	}); err != nil {
		t.Fatal(err)
	}
	mine := DeepCopy(read)
	mine.Spec.Containers[0].Image = "app:2"
	data, err := pods.MakePatch(StrategicMergePatchType, read, mine, PatchFromOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"spec":{"$setElementOrder/containers":[{"name":"app"}],"containers":[{"image":"app:2","name":"app"}]}}`; string(data) != want {
		t.Fatalf("patch %s\nwant %s", data, want)
	}
	got, err := pods.PatchFrom(ctx, StrategicMergePatchType, read, mine, PatchFromOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Spec.Containers; len(c) != 2 || c[0].Image != "app:2" || c[1].Name != "theirs" {
		t.Fatalf("containers %+v: want app:2 and theirs kept", c)
	}

	// A custom resource has no strategic merge patch (the server answers 415).
	widgets := TypedFor[*testobj.Widget](e.c)
	w := testobj.NewWidget("a", "w")
	if _, err := widgets.MakePatch(StrategicMergePatchType, w, w, PatchFromOptions{}); !errors.Is(err, ErrNoStrategicPatch) {
		t.Fatalf("strategic merge patch of a Widget: %v, want ErrNoStrategicPatch", err)
	}
}

func TestMergePatch(t *testing.T) {
	type obj struct {
		Metadata map[string]any `json:"metadata"`
		Spec     map[string]any `json:"spec,omitempty"`
	}
	from := obj{Metadata: map[string]any{"name": "x", "resourceVersion": "7"}, Spec: map[string]any{"a": 1, "b": []int{1}}}
	to := obj{Metadata: map[string]any{"name": "x", "resourceVersion": "7"}, Spec: map[string]any{"b": []int{1, 2}}}
	for _, c := range []struct {
		lock bool
		want string
	}{{false, `{"spec":{"a":null,"b":[1,2]}}`}, {true, `{"metadata":{"resourceVersion":"7"},"spec":{"a":null,"b":[1,2]}}`}} {
		got, err := MergePatch(from, to, PatchFromOptions{OptimisticLock: c.lock})
		if err != nil || string(got) != c.want {
			t.Errorf("MergePatch(lock %v) = %s, %v; want %s", c.lock, got, err, c.want)
		}
	}
	if _, err := MergePatch([]int{1}, []int{2}, PatchFromOptions{}); err == nil {
		t.Error("MergePatch of lists: no error")
	}
}
