package indexer

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testObj is the object type of the tests: namespaced, labelled, and able to make the test
// index functions fail on demand.
type testObj struct {
	ns, name string
	labels   map[string]string
	// tags feeds the multi-valued "tags" index.
	tags []string
	// fail makes the "fragile" index function fail.
	fail bool
	rv   string
}

func (o *testObj) GetNamespace() string { return o.ns }
func (o *testObj) GetName() string      { return o.name }

func obj(ns, name, app string) *testObj {
	return &testObj{ns: ns, name: name, labels: map[string]string{"app": app}}
}

func appIndex(o *testObj) ([]string, error) {
	if app, ok := o.labels["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

func tagsIndex(o *testObj) ([]string, error) { return o.tags, nil }

type fragileError struct{}

func (fragileError) Error() string { return "fragile index refuses this object" }

func fragileIndex(o *testObj) ([]string, error) {
	if o.fail {
		return nil, fragileError{}
	}
	return []string{o.name}, nil
}

func newTestIndexer(extra Indexers[*testObj]) Indexer[*testObj] {
	ix := Indexers[*testObj]{
		NamespaceIndex: MetaNamespaceIndexFunc[*testObj],
		"app":          appIndex,
	}
	for n, f := range extra {
		ix[n] = f
	}
	return New(MetaNamespaceKeyFunc[*testObj], ix)
}
