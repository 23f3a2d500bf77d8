package informer

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// mutations collects the detector's reports.
type mutations chan *CacheMutationError

func (m mutations) next(t *testing.T) *CacheMutationError {
	t.Helper()
	select {
	case err := <-m:
		return err
	case <-time.After(testTimeout):
		t.Fatal("no cache mutation reported")
		return nil
	}
}

// detectorOptions turn the detector on with reports sent to found, and no periodic sweep:
// the tests change cached objects on purpose, then check from the goroutine that changed
// them (sweep) or stop the informer (its final sweep), so that the race detector sees no
// race between the change and the check.
func detectorOptions(t *testing.T, found mutations) Options[*testobj.ConfigMap] {
	opts := fastOptions(t)
	opts.DetectCacheMutations = true
	opts.OnCacheMutation = func(err *CacheMutationError) { found <- err }
	opts.CacheMutationCheckInterval = -1
	return opts
}

func sweep(inf *Informer[*testobj.ConfigMap]) {
	inf.cache.(*mutationDetector[*testobj.ConfigMap]).sweep()
}

// A handler that edits the labels it was given corrupts the cache, and with structural
// sharing every object holding the same labels: the detector names the object and field.
func TestDetectorCatchesAHandlerMutatingSharedLabels(t *testing.T) {
	s := newServer(t)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": name,
			"labels": map[string]any{"app": "web"}}}); err != nil {
			t.Fatal(err)
		}
	}
	found := make(mutations, 10)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)).Namespace("default"), detectorOptions(t, found))
	mutated := make(chan struct{})
	if _, err := inf.AddEventHandler(ResourceEventHandlerFuncs[*testobj.ConfigMap]{AddFunc: func(o *testobj.ConfigMap, _ bool) {
		if o.Name == "a" {
			o.Labels["app"] = "changed" // the bug under test
			close(mutated)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	start(t, inf)
	wait(t, mutated, "the handler's mutation")
	// The handler may see a before b is cached: wait until the whole list is.
	wait(t, inf.Synced(), "sync")
	b, ok, _ := inf.GetIndexer().GetByKey("default/b")
	if !ok {
		t.Fatal("b not cached after the sync")
	}
	if b.Labels["app"] != "changed" {
		t.Fatal("the two objects do not share their labels: the test needs structural sharing")
	}
	sweep(inf)
	reports := map[string]*CacheMutationError{}
	for len(reports) < 2 {
		err := found.next(t)
		reports[err.Key] = err
	}
	for _, key := range []string{"default/a", "default/b"} {
		err := reports[key]
		if err == nil || err.Path != `metadata.labels["app"]` || err.Cached != `"web"` || err.Now != `"changed"` || err.Informer != inf.Name() {
			t.Errorf("%s: report %+v", key, err)
		}
	}
	if !strings.Contains(reports["default/a"].Error(), "deep-copy them before changing them") {
		t.Errorf("message: %v", reports["default/a"])
	}
	if n := inf.Stats().CacheMutations; n != 2 {
		t.Errorf("Stats.CacheMutations = %d", n)
	}
}

// A reconciler that edits what a lister returned: a sweep finds it without any event, once
// per change, and the informer's last sweep when it stops finds what is left.
func TestDetectorCatchesAListerResultMutation(t *testing.T) {
	s := newServer(t)
	mkCM(t, s, "default", "a", map[string]string{"k": "v"})
	found := make(mutations, 10)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), detectorOptions(t, found))
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	defer func() { cancel(); <-inf.Done() }()
	wait(t, inf.Synced(), "sync")
	cm, err := inf.Lister().Get("default", "a")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "edited in place"
	sweep(inf)
	if got := found.next(t); got.Key != "default/a" || got.Path != `data["k"]` {
		t.Fatalf("report %+v", got)
	}
	sweep(inf)
	select {
	case again := <-found:
		t.Fatalf("reported twice: %+v", again)
	default:
	}
	cm.Labels = map[string]string{"added": "later"}
	cancel()
	<-inf.Done()
	if got := found.next(t); got.Key != "default/a" || got.Path != "metadata.labels" {
		t.Fatalf("final sweep: %+v", got)
	}
}

func TestDetectorDefaultReportPanicsUnderTest(t *testing.T) {
	cache := withMutationDetector(indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil), "test", indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], true, nil, discardLogger())
	cm := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "a", ResourceVersion: "1"}, Data: map[string]string{"k": "v"}}
	if err := cache.Add(cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "x"
	defer func() {
		err, ok := recover().(*CacheMutationError)
		if !ok || err.Path != `data["k"]` {
			t.Fatalf("recovered %v", err)
		}
	}()
	_, _ = cache.DeleteByKey("n/a")
	t.Fatal("no panic")
}

func TestDetectorIsOffByDefault(t *testing.T) {
	t.Setenv(EnvCacheMutationDetector, "")
	cache := withMutationDetector(indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil), "test", indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], false, nil, discardLogger())
	if _, ok := cache.(*mutationDetector[*testobj.ConfigMap]); ok {
		t.Fatal("detector on without the option or the environment")
	}
	t.Setenv(EnvCacheMutationDetector, "true")
	cache = withMutationDetector(indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil), "test", indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], false, nil, discardLogger())
	if _, ok := cache.(*mutationDetector[*testobj.ConfigMap]); !ok {
		t.Fatal("environment variable ignored")
	}
}

func TestDetectorReplaceChecksAndRecords(t *testing.T) {
	var got []*CacheMutationError
	cache := withMutationDetector(indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil), "test", indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], true,
		func(e *CacheMutationError) { got = append(got, e) }, discardLogger())
	a := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "a"}, Data: map[string]string{"k": "v"}}
	b := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "b"}}
	if err := cache.Replace([]*testobj.ConfigMap{a, b}, "5"); err != nil {
		t.Fatal(err)
	}
	a.Data["k"] = "changed"
	b.Labels = map[string]string{"new": "label"}
	// A relist without b: a replaced (checked), b deleted (checked).
	if err := cache.Replace([]*testobj.ConfigMap{{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "a"}}}, "6"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("reports %+v", got)
	}
	paths := map[string]string{got[0].Key: got[0].Path, got[1].Key: got[1].Path}
	if paths["n/a"] != `data["k"]` || paths["n/b"] != "metadata.labels" {
		t.Fatalf("paths %v", paths)
	}
}

func TestFirstDifferencePaths(t *testing.T) {
	type inner struct {
		Image string `json:"image"`
		Ports []int
	}
	type spec struct {
		Containers []inner         `json:"containers"`
		Selector   map[string]any  `json:"selector,omitempty"`
		Ptr        *inner          `json:"ptr"`
		When       meta.Time       `json:"when"`
		Skip       string          `json:"-"`
		Any        any             `json:"any"`
		Nested     map[string]*int `json:"nested"`
	}
	type obj struct {
		meta.ObjectMeta `json:"metadata"`
		Spec            spec `json:"spec"`
	}
	one := 1
	base := func() obj {
		return obj{
			ObjectMeta: meta.ObjectMeta{Name: "x", Annotations: map[string]string{"a": "b"}},
			Spec: spec{Containers: []inner{{Image: "i", Ports: []int{80}}}, Selector: map[string]any{"m": []any{"x"}},
				Ptr: &inner{Image: "p"}, When: meta.NewTime(time.Unix(100, 0)), Skip: "s", Any: 1.0, Nested: map[string]*int{"n": &one}},
		}
	}
	two := 2
	cases := []struct {
		edit func(*obj)
		path string
	}{
		{func(o *obj) {}, ""},
		{func(o *obj) { o.Name = "y" }, ".metadata.name"},
		{func(o *obj) { o.Annotations["a"] = "c" }, `.metadata.annotations["a"]`},
		{func(o *obj) { o.Spec.Containers[0].Image = "j" }, ".spec.containers[0].image"},
		{func(o *obj) { o.Spec.Containers[0].Ports[0] = 81 }, ".spec.containers[0].Ports[0]"},
		{func(o *obj) { o.Spec.Selector["m"].([]any)[0] = "y" }, `.spec.selector["m"][0]`},
		{func(o *obj) { o.Spec.Ptr.Image = "q" }, ".spec.ptr.image"},
		{func(o *obj) { o.Spec.Ptr = nil }, ".spec.ptr"},
		{func(o *obj) { o.Spec.When = meta.NewTime(time.Unix(200, 0)) }, ".spec.when"},
		{func(o *obj) { o.Spec.Skip = "t" }, ".spec.Skip"},
		{func(o *obj) { o.Spec.Any = "1" }, ".spec.any"},
		{func(o *obj) { o.Spec.Nested["n"] = &two }, `.spec.nested["n"]`},
		{func(o *obj) { o.Spec.Nested["z"] = &two }, ".spec.nested"},
	}
	for _, tc := range cases {
		a, b := base(), base()
		tc.edit(&b)
		path, _, _, differ := firstDifference(reflect.ValueOf(a), reflect.ValueOf(b), "")
		if differ != (tc.path != "") || path != tc.path {
			t.Errorf("path = %q (differ %v), want %q", path, differ, tc.path)
		}
	}
}

func TestDetectorPeriodicSweep(t *testing.T) {
	found := make(mutations, 10)
	cache := withMutationDetector(indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil), "test", indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], true,
		func(e *CacheMutationError) { found <- e }, discardLogger())
	cm := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "a"}, Data: map[string]string{"k": "v"}}
	if err := cache.Add(cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "x" // before the sweeper starts: no race with it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runMutationDetector(ctx, cache, time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	if got := found.next(t); got.Key != "n/a" {
		t.Fatalf("report %+v", got)
	}
}
