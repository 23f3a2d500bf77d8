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

// A pool-like custom resource holds a LabelSelector; the controller validates it in the
// API server's words and lists with it.
func ExampleLabelSelector_AsSelector() {
	sel := meta.LabelSelector{
		MatchLabels:      map[string]string{"pool": "gpu"},
		MatchExpressions: []meta.LabelSelectorRequirement{{Key: "zone", Operator: meta.LabelSelectorOpIn, Values: []string{"b", "a"}}},
	}
	s, err := sel.AsSelector()
	fmt.Println(s.String(), err, s.Matches(map[string]string{"pool": "gpu", "zone": "a"}))

	bad := meta.LabelSelector{MatchExpressions: []meta.LabelSelectorRequirement{{Key: "zone", Operator: meta.LabelSelectorOpIn}}}
	fmt.Println(bad.Validate("spec.selector"))
	// Output:
	// pool=gpu,zone in (a,b) <nil> true
	// spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'
}

// A maxUnavailable of "25%" of 10 nodes, rounded down as a Deployment's is.
func ExampleIntOrString_ScaledValue() {
	var spec struct {
		MaxUnavailable meta.IntOrString `json:"maxUnavailable"`
		Grace          meta.Duration    `json:"drainGracePeriod"`
	}
	_ = json.Unmarshal([]byte(`{"maxUnavailable":"25%","drainGracePeriod":"5m"}`), &spec)
	n, err := spec.MaxUnavailable.ScaledValue(10, false)
	fmt.Println(n, err, spec.Grace.Minutes())
	// Output: 2 <nil> 5
}
