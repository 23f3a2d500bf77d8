package meta

import (
	"reflect"
	"testing"
	"time"
)

func TestAccessors(t *testing.T) {
	yes := true
	refs := []OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", Controller: &yes}}
	del := NewTime(time.Unix(1700000000, 0))
	for _, obj := range []Accessor{&ObjectMeta{}, &Unstructured{Object: map[string]any{}}} {
		obj.SetName("n")
		obj.SetNamespace("ns")
		obj.SetResourceVersion("7")
		obj.SetLabels(map[string]string{"a": "b"})
		obj.SetAnnotations(map[string]string{"c": "d"})
		obj.SetFinalizers([]string{"f"})
		obj.SetOwnerReferences(refs)
		if obj.GetName() != "n" || obj.GetNamespace() != "ns" || obj.GetResourceVersion() != "7" ||
			obj.GetLabels()["a"] != "b" || obj.GetAnnotations()["c"] != "d" ||
			!reflect.DeepEqual(obj.GetFinalizers(), []string{"f"}) || !reflect.DeepEqual(obj.GetOwnerReferences(), refs) {
			t.Errorf("%T: setters and getters disagree", obj)
		}
		if obj.GetDeletionTimestamp() != nil || !obj.GetCreationTimestamp().IsZero() || obj.GetUID() != "" || obj.GetGeneration() != 0 {
			t.Errorf("%T: unset fields read as set", obj)
		}
		obj.SetOwnerReferences(nil)
		obj.SetFinalizers(nil)
		if obj.GetOwnerReferences() != nil || obj.GetFinalizers() != nil {
			t.Errorf("%T: nil did not clear", obj)
		}
	}
	m := &ObjectMeta{DeletionTimestamp: &del, GenerateName: "g-", UID: "u", Generation: 3}
	if m.GetDeletionTimestamp() != &del || m.GetGenerateName() != "g-" || m.GetUID() != "u" || m.GetGeneration() != 3 {
		t.Error("ObjectMeta getters")
	}
	u, err := ToUnstructured(struct {
		Meta *ObjectMeta `json:"metadata"`
	}{m})
	if err != nil {
		t.Fatal(err)
	}
	if !u.GetDeletionTimestamp().Equal(del.Time) || u.GetGenerateName() != "g-" || u.GetGeneration() != 3 {
		t.Error("Unstructured getters")
	}
}
