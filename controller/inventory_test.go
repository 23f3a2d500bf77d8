package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
)

// The inventory names every informer with its type, objects, estimated bytes and who
// acquired it: InformerFor and a Kind source share the ConfigMap informer; a cached read
// started the Pod informer. /debug/informers serves it; the gauge exports the bytes.
func TestInventoryNamesEveryInformerAndWhoAcquiredIt(t *testing.T) {
	srv := newTestServer(t)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"},
		"data": map[string]any{"k": "some data"}}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{})
	if _, err := InformerFor[*testobj.ConfigMap](m); err != nil {
		t.Fatal(err)
	}
	c, err := New("inv", ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(Kind[*testobj.ConfigMap](m, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	select {
	case <-c.Started():
	case <-time.After(testTimeout):
		t.Fatal("the controller did not start")
	}
	if _, err := client.TypedFor[*testobj.Pod](m.Client()).List(context.Background(), client.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	inv := m.Inventory()
	byName := map[string]InformerInfo{}
	for _, i := range inv {
		byName[i.Name] = i
	}
	cm, pod := byName["configmaps.v1"], byName["pods.v1"]
	if cm.Type != "*testobj.ConfigMap" || cm.Objects != 1 || cm.EstimatedBytes <= int64(len("some data")) || !cm.Synced ||
		!slices.Equal(cm.AcquiredBy, []string{"InformerFor", "Kind"}) {
		t.Fatalf("configmaps: %+v (inventory %+v)", cm, inv)
	}
	if pod.Type != "*testobj.Pod" || !slices.Equal(pod.AcquiredBy, []string{"cached read"}) {
		t.Fatalf("pods: %+v", pod)
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/informers", nil))
	var body struct{ Informers []InformerInfo }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Informers) != len(inv) {
		t.Fatalf("/debug/informers: %v %s", err, rec.Body.String())
	}
	if v := metricValue(t, m, "informerkit_informer_estimated_bytes", map[string]string{"informer": "configmaps.v1"}); v <= 0 {
		t.Fatalf("estimated bytes gauge %v", v)
	}
}

// The budget refuses an informer past MaxInformers (InformerFor and a cached read alike),
// and fails Start once the caches synced above MaxEstimatedBytes.
func TestTheInformerBudgetRefusesAnInformer(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{InformerBudget: InformerBudget{MaxInformers: 1}})
	if _, err := InformerFor[*testobj.ConfigMap](m); err != nil {
		t.Fatal(err)
	}
	if _, err := InformerFor[*testobj.ConfigMap](m); err != nil {
		t.Fatalf("the same informer again: %v", err)
	}
	_, err := InformerFor[*testobj.Pod](m)
	var be *InformerBudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrInformerBudget) || be.Limit != 1 || be.Have != 2 {
		t.Fatalf("a second informer: %v", err)
	}
	startManager(t, m)
	if _, err := client.TypedFor[*testobj.Pod](m.Client()).List(context.Background(), client.ListOptions{}); !errors.Is(err, ErrInformerBudget) {
		t.Fatalf("a cached read past the budget: %v", err)
	}

	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
		t.Fatal(err)
	}
	m2 := newManager(t, srv, ManagerOptions{InformerBudget: InformerBudget{MaxEstimatedBytes: 1}})
	if _, err := InformerFor[*testobj.ConfigMap](m2); err != nil {
		t.Fatal(err)
	}
	stop, done := startManager(t, m2)
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("Start did not fail past the bytes budget")
	}
	if err := stop(); !errors.As(err, &be) || be.What != "estimated bytes" || be.Limit != 1 || be.Have <= 1 {
		t.Fatalf("Start past the bytes budget: %v", err)
	}
}

// The inventory gives each informer's resource, scope and selectors apart from its name.
func TestInventoryListsScopeAndSelectors(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	if _, err := InformerFor[*testobj.ConfigMap](m); err != nil {
		t.Fatal(err)
	}
	web, err := labels.Parse("app=web")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InformerForWithOptions[*testobj.Pod](m, InformerOptions{Namespace: "prod", LabelSelector: web,
		FieldSelector: "spec.nodeName=n1"}); err != nil {
		t.Fatal(err)
	}
	byResource := map[string]InformerInfo{}
	for _, i := range m.Inventory() {
		byResource[i.Resource] = i
	}
	cm, pod := byResource["configmaps.v1"], byResource["pods.v1"]
	if cm.Name != "configmaps.v1" || cm.Namespaces != nil || cm.LabelSelector != "" || cm.FieldSelector != "" {
		t.Errorf("configmaps: %+v", cm)
	}
	if !slices.Equal(pod.Namespaces, []string{"prod"}) || pod.LabelSelector != "app=web" || pod.FieldSelector != "spec.nodeName=n1" ||
		pod.Type != "*testobj.Pod" || !slices.Equal(pod.AcquiredBy, []string{"InformerFor"}) {
		t.Errorf("pods: %+v", pod)
	}
}

// The Builder's informers count in the budget: a Builder whose For or Owns would make an
// informer past MaxInformers fails at Complete with the budget's error.
func TestTheInformerBudgetRefusesABuildersInformer(t *testing.T) {
	srv := newTestServer(t)
	nop := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })
	m := newManager(t, srv, ManagerOptions{InformerBudget: InformerBudget{MaxInformers: 1}})
	if err := NewBuilder(m, "cms").For(Primary[*testobj.ConfigMap]()).Complete(nop); err != nil {
		t.Fatalf("a Builder within the budget: %v", err)
	}
	err := NewBuilder(m, "pods").For(Primary[*testobj.Pod]()).Complete(nop)
	var be *InformerBudgetError
	if !errors.As(err, &be) || be.Informer != "pods.v1" || be.Limit != 1 || be.Have != 2 {
		t.Fatalf("a Builder's informer past the budget: %v", err)
	}
	err = NewBuilder(m, "owner").For(Primary[*testobj.ConfigMap]()).Owns(Owned[*testobj.Pod]()).Complete(nop)
	if !errors.Is(err, ErrInformerBudget) {
		t.Fatalf("a Builder's owned informer past the budget: %v", err)
	}
	if inv := m.Inventory(); len(inv) != 1 || !slices.Equal(inv[0].AcquiredBy, []string{"Builder"}) {
		t.Fatalf("inventory %+v, want the Builder's ConfigMap informer alone", inv)
	}
}
