package meta_test

import (
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/meta"
)

// A controller declares only the fields it reads; everything else in the API's JSON is
// skipped when decoding.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

func Example() {
	var cm ConfigMap
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"prod","resourceVersion":"42"},"data":{"mode":"fast"},"binaryData":{}}`
	if err := json.Unmarshal([]byte(body), &cm); err != nil {
		panic(err)
	}
	fmt.Println(cm.GroupVersionKind(), cm.GetNamespace()+"/"+cm.GetName(), cm.GetResourceVersion(), cm.Data["mode"])
	// Output: v1, Kind=ConfigMap prod/settings 42 fast
}

// Errors from the API server are *Status values; the predicates look through wrapped errors.
func ExampleIsNotFound() {
	var st meta.Status
	_ = json.Unmarshal([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"configmaps \"x\" not found"}`), &st)
	err := fmt.Errorf("reading the settings: %w", &st)
	fmt.Println(meta.IsNotFound(err), meta.IsConflict(err))
	fmt.Println(err)
	// Output:
	// true false
	// reading the settings: NotFound (404): configmaps "x" not found
}

func ExampleUnstructured() {
	var u meta.Unstructured
	_ = json.Unmarshal([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}`), &u)
	size, found, err := meta.NestedInt64(u.Object, "spec", "size")
	fmt.Println(u.GroupVersionKind().Kind, u.GetName(), size, found, err)
	// Output: Widget w 3 true <nil>
}
