package informer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// testFactory returns a factory with opts, the test's logger and a fast backoff.
func testFactory(t *testing.T, c *apiclient.Client, opts FactoryOptions) *Factory {
	opts.Logger = testLogger(t)
	opts.Backoff = reflector.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Jitter: -1}
	f := NewFactoryWithOptions(c, opts)
	t.Cleanup(f.Shutdown)
	return f
}

func TestFactorySharesOneInformerPerKey(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	f := testFactory(t, c, FactoryOptions{})
	a := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	if InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR) != a {
		t.Fatal("same resource and type: different informers")
	}
	if InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{Namespace: "default"}) == a {
		t.Fatal("a namespaced informer is the cluster-wide one")
	}
	if InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{LabelSelector: labels.MustParse("app=x")}) == a {
		t.Fatal("a selected informer is the unselected one")
	}
	// Another Go type (any will do: Widget) for the same resource is another informer.
	if any(InformerFor[*testobj.Widget](f, testobj.ConfigMapGVR)) == any(a) {
		t.Fatal("another Go type shares the informer")
	}
	if got := InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{Namespace: "default", LabelSelector: labels.MustParse("app=x")}).Name(); got != "configmaps.v1 in default labels app=x" {
		t.Fatalf("Name() = %q", got)
	}
}

func TestFactoryStartIsIncrementalAndShutdownWaits(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", nil)
	f := testFactory(t, c, FactoryOptions{WatchList: reflector.WatchListOff})
	all := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	reg, _ := all.AddEventHandler(newCalls())
	ctx := ctxT(t)
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	lists := s.CountRequests(apitest.VerbList, "configmaps")

	ns := InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{Namespace: "default"})
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	if !ns.HasSynced() {
		t.Fatal("the second informer did not start")
	}
	if got := s.CountRequests(apitest.VerbList, "configmaps"); got != lists+1 {
		t.Fatalf("LIST requests %d → %d: the second Start restarted the first informer", lists, got)
	}
	if _, err := ns.Lister().Get("default", "a"); err != nil {
		t.Fatal(err)
	}

	f.Shutdown()
	if !all.IsStopped() || !ns.IsStopped() {
		t.Fatal("Shutdown returned before the informers stopped")
	}
	select {
	case <-reg.Done():
	default:
		t.Fatal("Shutdown returned before the handlers stopped")
	}
	late := InformerFor[*testobj.Widget](f, testobj.ConfigMapGVR)
	f.Start(ctx)
	if late.HasStarted() {
		t.Fatal("Start after Shutdown started an informer")
	}
}

func TestFactoryWaitForCacheSyncNamesTheLaggards(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	f := testFactory(t, c, FactoryOptions{NotFoundLogInterval: time.Hour})
	configMaps := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	widgets := InformerFor[*testobj.Widget](f, testobj.WidgetGVR)
	refused := make(chan struct{}, 100)
	if err := widgets.SetWatchErrorHandler(func(_ context.Context, err error) {
		if meta.IsNotFound(err) {
			refused <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	f.Start(ctx)
	// The configmaps informer syncs (the state asserted below: it must not be named); the
	// widgets informer is refused a few times. Then give up waiting.
	wait(t, configMaps.Synced(), "configmaps sync")
	for range 3 {
		select {
		case <-refused:
		case <-ctx.Done():
			t.Fatal("the widgets informer was never refused")
		}
	}
	waitCtx, stop := context.WithCancel(ctx)
	stop()
	err := f.WaitForCacheSync(waitCtx)
	var nse *NotSyncedError
	if !errors.As(err, &nse) || !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitForCacheSync = %v, want a NotSyncedError", err)
	}
	if strings.Join(nse.Informers, ",") != "widgets.v1.example.com" {
		t.Fatalf("not synced: %v, want only widgets.v1.example.com (error: %v)", nse.Informers, err)
	}
	cancel()
}

func TestFactorySelectorsFilterOnTheServer(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "web", "labels": map[string]any{"app": "web"}}}); err != nil {
		t.Fatal(err)
	}
	mkCM(t, s, "default", "other", nil)
	f := testFactory(t, c, FactoryOptions{})
	inf := InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{LabelSelector: labels.MustParse("app=web")})
	h := newCalls()
	reg, _ := inf.AddEventHandler(h)
	f.Start(ctxT(t))
	wait(t, reg.Synced(), "sync")
	if got := h.next(t); !strings.HasPrefix(got, "add default/web ") {
		t.Fatalf("first call %q", got)
	}
	if n := inf.GetStore().Len(); n != 1 {
		t.Fatalf("cache holds %d objects, want 1", n)
	}
	// The object stops matching: the server sends a DELETED, the cache drops it.
	if _, err := s.Mutate("configmaps", "default", "web", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "db"}
	}); err != nil {
		t.Fatal(err)
	}
	if got := h.next(t); !strings.HasPrefix(got, "delete default/web ") {
		t.Fatalf("call %q, want the delete of web", got)
	}
	if n := inf.GetStore().Len(); n != 0 {
		t.Fatalf("cache holds %d objects, want 0", n)
	}
	for _, r := range s.RequestsFor(apitest.VerbWatch, "configmaps") {
		if r.Param("labelSelector") != "app=web" {
			t.Fatalf("watch without the selector: %v", r.Query)
		}
	}
}

func TestFactoryInformersListsEveryInformerItMade(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", nil)
	f := testFactory(t, c, FactoryOptions{DisableSharing: true})
	if got := f.Informers(); len(got) != 0 {
		t.Fatalf("a new factory lists %d informers", len(got))
	}
	all := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR) // the same one again
	widgets := InformerForWithOptions[*testobj.Widget](f, testobj.ConfigMapGVR, InformerForOptions{Namespace: "default"})
	infs := f.Informers()
	if len(infs) != 2 || infs[0] != AnyInformer(all) || infs[1] != AnyInformer(widgets) {
		t.Fatalf("Informers() = %v, want the two informers in creation order", infs)
	}
	if infs[0].Name() != "configmaps.v1" || infs[1].Name() != "configmaps.v1 in default" {
		t.Fatalf("names %q, %q", infs[0].Name(), infs[1].Name())
	}
	if infs[0].HasStarted() || infs[0].HasSynced() || infs[0].Staleness() != 0 {
		t.Fatal("an informer reports progress before Start")
	}
	ctx := ctxT(t)
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, inf := range f.Informers() {
		if !inf.HasStarted() || !inf.HasSynced() {
			t.Fatalf("%s: started %v, synced %v after WaitForCacheSync", inf.Name(), inf.HasStarted(), inf.HasSynced())
		}
		if st := inf.Stats(); st.Name != inf.Name() || st.Cached != 1 || st.Sharing.Enabled {
			t.Fatalf("%s: stats %+v (DisableSharing)", inf.Name(), st)
		}
	}
}
