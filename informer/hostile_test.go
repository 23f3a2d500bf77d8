package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/reflector"
)

// A list that fails part-way (a connection cut, a body that turns to garbage) must leave
// the cache and the handlers exactly as they were before it, for the first list as for a
// relist, as client-go's do: it applies nothing of a list that did not complete.

// notes records every notification a handler got, per key.
type notes struct {
	mu  sync.Mutex
	log map[string][]string
	n   int
}

func (n *notes) add(key, what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.log == nil {
		n.log = map[string][]string{}
	}
	n.log[key] = append(n.log[key], what)
	n.n++
}

// take returns the notifications since the last take.
func (n *notes) take() (map[string][]string, int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	log, count := n.log, n.n
	n.log, n.n = nil, 0
	return log, count
}

func (n *notes) handler() ResourceEventHandlerFuncs[*testobj.ConfigMap] {
	k := func(o *testobj.ConfigMap) string { return o.Namespace + "/" + o.Name }
	return ResourceEventHandlerFuncs[*testobj.ConfigMap]{
		AddFunc:    func(o *testobj.ConfigMap, _ bool) { n.add(k(o), "add@"+o.ResourceVersion) },
		UpdateFunc: func(_, o *testobj.ConfigMap) { n.add(k(o), "update@"+o.ResourceVersion) },
		DeleteFunc: func(o *testobj.ConfigMap, _ bool) { n.add(k(o), "delete") },
	}
}

// cacheContent returns key → resourceVersion of the informer's cache.
func cacheContent(inf *Informer[*testobj.ConfigMap]) map[string]string {
	out := map[string]string{}
	for _, o := range inf.GetIndexer().List() {
		out[o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	return out
}

func serverContent(t *testing.T, s *apitest.Server) map[string]string {
	t.Helper()
	objs, _, err := s.List("configmaps", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range objs {
		out[o.Namespace()+"/"+o.Name()] = o.ResourceVersion()
	}
	return out
}

type listFault struct {
	name   string
	inject func(s *apitest.Server, verb apitest.Verb, afterBytes int) error
}

var listFaults = []listFault{
	{"cut", func(s *apitest.Server, v apitest.Verb, n int) error {
		return s.Faults().TruncateResponses(v, "configmaps", 1, n)
	}},
	{"garbage", func(s *apitest.Server, v apitest.Verb, n int) error {
		return s.Faults().CorruptResponses(v, "configmaps", 1, n)
	}},
}

func TestAFailedListChangesNothing(t *testing.T) {
	type transport struct {
		name  string
		tls   bool
		proto apiclient.WatchProtocol
	}
	for _, tc := range []transport{{"http2", true, apiclient.WatchChunked}, {"websocket", false, apiclient.WatchWebSocket}} {
		for _, f := range listFaults {
			for _, mode := range []fifoMode{fifoAtomic, fifoCoalescing, fifoInOrder} {
				for _, wl := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListOn} {
					if wl == reflector.WatchListOn && tc.proto == apiclient.WatchWebSocket {
						continue // the faults cut plain HTTP bodies, not WebSocket messages
					}
					name := fmt.Sprintf("%s/%s/%s/watchList=%s", tc.name, f.name, mode, wl)
					t.Run(name, func(t *testing.T) {
						synctest.Test(t, func(t *testing.T) { testFailedList(t, tc.tls, tc.proto, f, mode, wl) })
					})
				}
			}
		}
	}
}

func testFailedList(t *testing.T, tls bool, proto apiclient.WatchProtocol, f listFault, mode fifoMode, wl reflector.WatchListMode) {
	netw := apitest.NewNetwork()
	s := newServerWithOptions(t, apitest.Options{Network: netw, TLS: tls})
	cfg := s.Config()
	cfg.WatchProtocol, cfg.WatchResponseHeaderTimeout = proto, 10*time.Second
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for i := range 300 {
		mkCM(t, s, "default", fmt.Sprintf("cm-%03d", i), map[string]string{"k": fmt.Sprintf("value-%d-of-some-length", i)})
	}
	// The list breaks a third of the way through (a WatchList's initial events likewise).
	verb := apitest.VerbList
	if wl == reflector.WatchListOn {
		verb = apitest.VerbWatch
	}
	if err := f.inject(s, verb, 6000); err != nil {
		t.Fatal(err)
	}
	holdFallback := func() {
		// A failed streaming list falls back to a LIST at once: held until its deadline,
		// it lets the test look at the informer between the two.
		if wl == reflector.WatchListOn {
			if err := s.Faults().HangRequests(apitest.VerbList, "configmaps", 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	holdFallback()
	errs := make(chan error, 100)
	opts := Options[*testobj.ConfigMap]{Logger: testLogger(t), WatchList: wl, mode: mode,
		Backoff: reflector.Backoff{Initial: time.Second, Max: time.Second}}
	inf := New[*testobj.ConfigMap](configMaps(c), opts)
	if err := inf.SetWatchErrorHandler(func(_ context.Context, err error) { errs <- err }); err != nil {
		t.Fatal(err)
	}
	var n notes
	if _, err := inf.AddEventHandler(n.handler()); err != nil {
		t.Fatal(err)
	}
	start(t, inf)

	// The first list fails: nothing cached, no handler told, not synced.
	err = <-errs
	synctest.Wait()
	if got, count := n.take(); count != 0 || inf.Stats().Cached != 0 || inf.HasSynced() {
		t.Fatalf("after the failed first list (%v): %d notifications (%d keys), %d cached, synced %v",
			err, count, len(got), inf.Stats().Cached, inf.HasSynced())
	}
	<-inf.Synced()
	synctest.Wait()
	want := serverContent(t, s)
	if got := cacheContent(inf); !maps.Equal(got, want) {
		t.Fatalf("cache after the first list: %d objects, want %d", len(got), len(want))
	}
	if got, count := n.take(); count != len(want) {
		t.Fatalf("%d notifications for %d objects: %v", count, len(want), got)
	}

	// A relist fails: the watch's re-opening hangs until its deadline while objects change
	// and the history is compacted, so the next watch gets 410 and the informer relists.
	before := cacheContent(inf)
	if err := s.Faults().HangRequests(apitest.VerbWatch, "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Faults().CutWatches("configmaps"); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		name := fmt.Sprintf("cm-%03d", i)
		switch {
		case i < 20:
			if err := s.Delete("configmaps", "default", name); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := s.Mutate("configmaps", "default", name, func(o apitest.Object) { o["data"] = map[string]any{"k": "changed"} }); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkCM(t, s, "default", "new", nil)
	if err := s.Compact(""); err != nil {
		t.Fatal(err)
	}
	relistVerb := apitest.VerbList
	if wl == reflector.WatchListOn {
		relistVerb = apitest.VerbWatch
	}
	if err := f.inject(s, relistVerb, 6000); err != nil {
		t.Fatal(err)
	}
	holdFallback()
	lists := inf.Stats().Reflector.Lists
	// Wait for the failure of the relist itself (after the hung watch and the 410).
	for failed := false; !failed; {
		err := <-errs
		var re *reflector.Error
		failed = errors.As(err, &re) && (re.Op == "list" || re.Op == "watch-list")
	}
	synctest.Wait()
	if got, count := n.take(); count != 0 {
		t.Fatalf("after the failed relist: %d notifications: %v", count, got)
	}
	if got := cacheContent(inf); !maps.Equal(got, before) {
		t.Fatalf("the failed relist changed the cache: %d objects, %d before", len(got), len(before))
	}
	// The next relist completes: the cache is the server's, each change told once.
	for inf.Stats().Reflector.Lists == lists {
		time.Sleep(100 * time.Millisecond) // fake time: the backoff before the next attempt
	}
	synctest.Wait()
	want = serverContent(t, s)
	if got := cacheContent(inf); !maps.Equal(got, want) {
		t.Fatalf("cache after the relist: %d objects, want %d", len(got), len(want))
	}
	got, count := n.take()
	if count != 61 || len(got) != 61 {
		t.Fatalf("%d notifications for the 61 changes: %v", count, got)
	}
	for k, ns := range got {
		if len(ns) != 1 {
			t.Errorf("%s told %v", k, ns)
		}
	}
}

// An object of another kind than the informer's resource (a Pod on a ConfigMap watch) is
// skipped with an error: never cached, never handed to a handler, and the watch goes on.
func TestAnObjectOfAnotherKindNeverReachesTheCache(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tls      bool
		proto    apiclient.WatchProtocol
		protobuf bool
	}{
		{"http2/protobuf", true, apiclient.WatchChunked, true},
		{"http2/json", true, apiclient.WatchChunked, false},
		{"websocket/protobuf", false, apiclient.WatchWebSocket, true},
		{"websocket/json", false, apiclient.WatchWebSocket, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				s := newServerWithOptions(t, apitest.Options{Network: netw, TLS: tc.tls})
				cfg := s.Config()
				cfg.WatchProtocol, cfg.DisableProtobuf = tc.proto, !tc.protobuf
				c, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(c.Close)
				mkCM(t, s, "default", "a", nil)
				errs := make(chan error, 10)
				inf := New[*testobj.ConfigMap](configMaps(c), Options[*testobj.ConfigMap]{Logger: testLogger(t)})
				if err := inf.SetWatchErrorHandler(func(_ context.Context, err error) { errs <- err }); err != nil {
					t.Fatal(err)
				}
				var n notes
				if _, err := inf.AddEventHandler(n.handler()); err != nil {
					t.Fatal(err)
				}
				start(t, inf)
				<-inf.Synced()
				if _, err := s.WaitForWatches(t.Context(), "configmaps", 1); err != nil {
					t.Fatal(err)
				}
				pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "evil", "namespace": "default", "resourceVersion": "999999"}}
				if k, err := s.Faults().SendWatchEvent("configmaps", apiclient.Added, pod); err != nil || k != 1 {
					t.Fatalf("SendWatchEvent: %d, %v", k, err)
				}
				mkCM(t, s, "default", "b", nil)
				for !maps.Equal(cacheContent(inf), serverContent(t, s)) {
					time.Sleep(10 * time.Millisecond) // fake time: until the event after it is cached
				}
				synctest.Wait()
				if got := cacheContent(inf); got["default/evil"] != "" {
					t.Errorf("the pod was cached: %v", got)
				}
				if got, _ := n.take(); got["default/evil"] != nil || len(got["default/b"]) != 1 {
					t.Errorf("handler notes %v, want b and not the pod", got)
				}
				if err := <-errs; !errors.Is(err, apiclient.ErrWrongKind) {
					t.Errorf("WatchErrorHandler got %v, want ErrWrongKind", err)
				}
				if st := inf.Stats().Reflector; st.Skipped != 1 || st.Relists != 0 {
					t.Errorf("stats: %d skipped, %d relists; want 1 and 0", st.Skipped, st.Relists)
				}
			})
		})
	}
}
