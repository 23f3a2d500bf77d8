package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/kinds"
)

// The controller kit (issue 16) against the real kube-apiserver: events that kubectl shows,
// and CreateOrUpdate's status write on a custom resource with a status subresource.

type kitConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

// kitManager starts a manager on the cluster with a registry of its own; stop stops it and
// returns Start's error (the queued events are written by then).
func kitManager(t *testing.T, c *cluster.Cluster, reg *kinds.Registry) (m *controller.Manager, stop func() error) {
	t.Helper()
	m, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Kinds: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	select {
	case <-m.Elected():
	case err := <-done:
		t.Fatalf("manager: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("manager did not start")
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return m, stop
}

func TestEventsOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*kitConfigMap](), kinds.ConfigMap); err != nil {
		t.Fatal(err)
	}
	m, stop := kitManager(t, c, reg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := client.TypedFor[*kitConfigMap](m.Client())
	created, err := cms.Create(ctx, &kitConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: "settings"}}, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As a reconciler would record them, about the cached object (no apiVersion or kind).
	cached, err := cms.Get(ctx, ns, "settings", client.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Objects of lists of built-in kinds come without apiVersion and kind; the registry
	// must supply them.
	cached.TypeMeta = meta.TypeMeta{}
	rec := m.EventRecorderFor("kit-e2e")
	for range 3 {
		rec.Event(cached, events.Normal, "Synced", "copied to 2 namespaces")
	}
	rec.Eventf(cached, events.Warning, "FailedCopy", "namespace %s is terminating", "team-c")
	for i := range 10 {
		rec.Eventf(cached, events.Normal, "Tick", "tick %d", i)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := m.EventBroadcaster().Stats(); s.Failed != 0 || s.Rejected != 0 || s.Dropped != 0 {
		t.Fatalf("event stats %+v", s)
	}

	evs, err := apiclient.NewResource[*events.Event](mustClient(t, c), kinds.Event.GroupVersionResource()).Namespace(ns).List(ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byReason := map[string][]*events.Event{}
	for _, e := range evs.Items {
		byReason[e.Reason] = append(byReason[e.Reason], e)
	}
	synced := byReason["Synced"]
	if len(synced) != 1 || synced[0].Count != 3 || synced[0].InvolvedObject.UID != created.UID ||
		synced[0].InvolvedObject.Kind != "ConfigMap" || synced[0].InvolvedObject.APIVersion != "v1" ||
		synced[0].ReportingController != "kit-e2e" || synced[0].ReportingInstance == "" {
		t.Fatalf("Synced events: %+v", synced)
	}
	ticks := byReason["Tick"]
	combined := 0
	for _, e := range ticks {
		if strings.HasPrefix(e.Message, "(combined from similar events): ") {
			combined++
		}
	}
	if len(ticks) != 10 || combined != 1 {
		t.Fatalf("Tick events: %d, %d combined", len(ticks), combined)
	}

	// What a user sees.
	get := kubectl(t, c, "get", "events", "-n", ns, "--field-selector", "reason=Synced")
	if !strings.Contains(get, "configmap/settings") || !strings.Contains(get, "copied to 2 namespaces") || !strings.Contains(get, "Normal") {
		t.Errorf("kubectl get events:\n%s", get)
	}
	describe := kubectl(t, c, "describe", "configmap", "settings", "-n", ns)
	for _, want := range []string{"Events:", "Synced", "kit-e2e", "copied to 2 namespaces", "(x3 over", "Warning", "FailedCopy", "namespace team-c is terminating"} {
		if !strings.Contains(describe, want) {
			t.Errorf("kubectl describe lacks %q:\n%s", want, describe)
		}
	}
}

func mustClient(t *testing.T, c *cluster.Cluster) *apiclient.Client {
	t.Helper()
	ac, err := apiclient.New(mustConfig(t, c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ac.Close)
	return ac
}

type gadget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Size int `json:"size"`
	} `json:"spec"`
	Status struct {
		Ready bool `json:"ready,omitempty"`
	} `json:"status,omitzero"`
}

// The kube-apiserver drops the status of a created custom resource with a status
// subresource (apitest keeps it): CreateOrUpdate writes it through the subresource.
func TestCreateOrUpdateStatusOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	ac := mustClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	group := fmt.Sprintf("kit%d.informerkit.dev", time.Now().UnixNano()%1e6)
	info := kinds.Info{Group: group, Version: "v1", Kind: "Gadget", Resource: "gadgets", Namespaced: true, StatusSubresource: true}
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	preserve := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	if _, err := crds.Create(ctx, &meta.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"properties": map[string]any{"spec": preserve, "status": preserve}}}}}},
	}}, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "gadgets."+group, apiclient.DeleteOptions{}) })
	// Served once discovery lists it.
	deadline := time.Now().Add(time.Minute)
	for {
		ac.InvalidateDiscovery()
		if _, err := ac.ResolveResource(ctx, "gadgets."+group); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD was not served within a minute")
		}
		time.Sleep(200 * time.Millisecond) // polling discovery: there is no watch of it
	}
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*gadget](), info); err != nil {
		t.Fatal(err)
	}
	m, _ := kitManager(t, c, reg)
	gadgets := client.TypedFor[*gadget](m.Client())
	mutate := func(g *gadget) error {
		g.Spec.Size = 3
		g.Status.Ready = true
		return nil
	}
	newGadget := func() *gadget { return &gadget{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: "g"}} }
	out, res, err := controllerutil.CreateOrUpdate(ctx, gadgets, newGadget(), mutate)
	if err != nil || res != controllerutil.OperationResultCreated || !out.Status.Ready || out.Spec.Size != 3 {
		t.Fatalf("CreateOrUpdate: %q %v %+v", res, err, out)
	}
	stored, err := apiclient.NewResource[*gadget](ac, info.GroupVersionResource()).Namespace(ns).Get(ctx, "g", apiclient.GetOptions{})
	if err != nil || !stored.Status.Ready {
		t.Fatalf("stored: %+v %v", stored, err)
	}
	if _, res, err := controllerutil.CreateOrUpdate(ctx, gadgets, newGadget(), mutate); err != nil || res != controllerutil.OperationResultNone {
		t.Fatalf("second CreateOrUpdate: %q %v", res, err)
	}

	// Server-side apply through the client, of the object and of its status; reads through
	// the client see the results at once.
	applied, err := gadgets.Apply(ctx, ns, "h", map[string]any{"apiVersion": info.APIVersion(), "kind": "Gadget",
		"metadata": map[string]any{"name": "h", "namespace": ns}, "spec": map[string]any{"size": 5}},
		apiclient.ApplyOptions{FieldManager: "kit-e2e"})
	if err != nil || applied.Spec.Size != 5 {
		t.Fatalf("Apply: %+v %v", applied, err)
	}
	if _, err := gadgets.Status().Apply(ctx, ns, "h", map[string]any{"apiVersion": info.APIVersion(), "kind": "Gadget",
		"metadata": map[string]any{"name": "h", "namespace": ns}, "status": map[string]any{"ready": true}},
		apiclient.ApplyOptions{FieldManager: "kit-e2e"}); err != nil {
		t.Fatalf("status Apply: %v", err)
	}
	got, err := gadgets.Get(ctx, ns, "h", client.GetOptions{})
	if err != nil || got.Spec.Size != 5 || !got.Status.Ready {
		t.Fatalf("read after the applies: %+v %v", got, err)
	}
}
