package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/reflector"
)

// Informer tests against the real kube-apiserver: a shared informer over 2,000 configmaps
// syncs by WatchList, then sees every later change in order, across a kube-apiserver
// restart; an informer of the uncached resource (podtemplates, served from etcd) survives the
// restart by re-watching from its resourceVersion, without a relist.

type infConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

type infPodTemplate struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Template        map[string]any `json:"template,omitempty"`
}

func infPodTemplateNamed(name string) *infPodTemplate {
	return &infPodTemplate{ObjectMeta: meta.ObjectMeta{Name: name}, Template: map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}
}

var (
	infConfigMaps   = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	infPodTemplates = meta.GroupVersionResource{Version: "v1", Resource: cluster.UncachedResource}
)

// callLog records handler calls as lines and lets a test wait for the next one.
type callLog struct {
	ch chan string
}

func newCallLog() *callLog { return &callLog{ch: make(chan string, 10000)} }

func (l *callLog) OnAdd(o *infConfigMap, initial bool) {
	l.ch <- fmt.Sprintf("add %s %s %v", o.Name, o.ResourceVersion, initial)
}
func (l *callLog) OnUpdate(old, o *infConfigMap) {
	l.ch <- fmt.Sprintf("update %s %s→%s", o.Name, old.ResourceVersion, o.ResourceVersion)
}
func (l *callLog) OnDelete(o *infConfigMap, unknown bool) {
	l.ch <- fmt.Sprintf("delete %s %v", o.Name, unknown)
}

func (l *callLog) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l.ch:
		return s
	case <-time.After(2 * time.Minute):
		t.Fatal("timed out waiting for a handler call")
		return ""
	}
}

func infClient(t *testing.T, c *cluster.Cluster) *apiclient.Client {
	return acClient(t, c, func(cfg *apiclient.Config) {
		cfg.QPS = -1
		cfg.WatchProtocol = apiclient.WatchAuto
	})
}

func infOptions[T meta.Object](t *testing.T) informer.Options[T] {
	return informer.Options[T]{
		// Short backoff so the restart is bridged quickly.
		Backoff: reflector.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second},
		Logger:  slog.New(slog.NewTextHandler(tLogWriter{t}, nil)),
	}
}

type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func runInformer[T meta.Object](t *testing.T, inf *informer.Informer[T]) {
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	t.Cleanup(func() {
		cancel()
		<-inf.Done()
	})
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(3 * time.Minute):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// changes makes n creates, updates and deletes of configmaps in ns, one after the other,
// and returns the handler calls they must produce, in order.
func changes(t *testing.T, cms *apiclient.Resource[*infConfigMap], tag string, n int) []string {
	t.Helper()
	ctx := acCtx(t, 5*time.Minute)
	var want []string
	var live []*infConfigMap
	for i := range n {
		switch {
		case i%3 == 0 || len(live) == 0:
			o, err := cms.Create(ctx, &infConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("%s-%d", tag, i)}, Data: map[string]string{"i": fmt.Sprint(i)}}, apiclient.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, o)
			want = append(want, fmt.Sprintf("add %s %s false", o.Name, o.ResourceVersion))
		case i%3 == 1:
			cur := live[len(live)-1]
			next := &infConfigMap{ObjectMeta: meta.ObjectMeta{Name: cur.Name, Namespace: cur.Namespace, ResourceVersion: cur.ResourceVersion}, Data: map[string]string{"i": fmt.Sprint(i)}}
			o, err := cms.Update(ctx, next, apiclient.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			live[len(live)-1] = o
			want = append(want, fmt.Sprintf("update %s %s→%s", o.Name, cur.ResourceVersion, o.ResourceVersion))
		default:
			cur := live[0]
			live = live[1:]
			if err := cms.Delete(ctx, cur.Name, apiclient.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("delete %s false", cur.Name))
		}
	}
	return want
}

func expectCalls(t *testing.T, log *callLog, want []string) {
	t.Helper()
	for i, w := range want {
		if got := log.next(t); got != w {
			t.Fatalf("handler call %d = %q, want %q", i, got, w)
		}
	}
}

// TestInformerConfigMapsAcrossRestart is the informer's end-to-end test; it restarts
// kube-apiserver, so it must not run in parallel with other tests.
func TestInformerConfigMapsAcrossRestart(t *testing.T) {
	c := cluster.ForTest(t)
	ac := infClient(t, c)
	ns := acNamespace(t, ac)
	cms := apiclient.NewResource[*infConfigMap](ac, infConfigMaps).Namespace(ns)
	pts := apiclient.NewResource[*infPodTemplate](ac, infPodTemplates).Namespace(ns)

	const initial = 2000
	ctx := acCtx(t, 5*time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, initial)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < initial; i += 8 {
				if _, err := cms.Create(ctx, &infConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("init-%04d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}, apiclient.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := pts.Create(ctx, infPodTemplateNamed("pt"), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	inf := informer.New(cms, infOptions[*infConfigMap](t))
	log := newCallLog()
	reg, err := inf.AddEventHandler(log)
	if err != nil {
		t.Fatal(err)
	}
	ptInf := informer.New(pts, infOptions[*infPodTemplate](t))
	runInformer(t, inf)
	runInformer(t, ptInf)
	waitClosed(t, reg.Synced(), "the configmap handler to sync")
	waitClosed(t, ptInf.Synced(), "the podtemplate informer to sync")

	seen := map[string]bool{}
	for range initial {
		f := strings.Fields(log.next(t))
		if f[0] != "add" || f[3] != "true" || seen[f[1]] {
			t.Fatalf("initial call %v", f)
		}
		seen[f[1]] = true
	}
	if n := inf.GetStore().Len(); n != initial {
		t.Fatalf("cache holds %d configmaps, want %d", n, initial)
	}
	st := inf.Stats().Reflector
	if st.WatchListSyncs != 1 || st.ListRequests != 0 {
		t.Fatalf("the initial sync did not use WatchList: %+v", st)
	}

	// Every later change, in order.
	expectCalls(t, log, changes(t, cms, "before", 60))

	ptBefore := ptInf.Stats().Reflector
	if err := c.RestartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The informer reconnects by itself (a re-watch from its resourceVersion, or a relist if
	// the new watch cache finds that resourceVersion too old). The first call it makes
	// after the restart is the add of a marker created now: nothing of the 2,060 objects it
	// had is replayed (an unchanged object from a relist is no notification).
	marker, err := cms.Create(ctx, &infConfigMap{ObjectMeta: meta.ObjectMeta{Name: "marker"}}, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := log.next(t), fmt.Sprintf("add marker %s false", marker.ResourceVersion); got != want {
		t.Fatalf("first call after the restart = %q, want %q", got, want)
	}
	// Once reconnected, every change is seen again, in order.
	expectCalls(t, log, changes(t, cms, "after", 60))
	select {
	case extra := <-log.ch:
		t.Fatalf("unexpected handler call after the restart: %q", extra)
	default:
	}
	t.Logf("configmaps reflector across the restart: %+v", inf.Stats().Reflector)

	// The podtemplate informer re-watched from its resourceVersion: etcd still has it, so
	// no relist was needed.
	if _, err := pts.Create(ctx, infPodTemplateNamed("pt2"), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Minute)
	for ptInf.GetStore().Len() != 2 {
		select {
		case <-deadline:
			t.Fatalf("podtemplate informer did not see pt2: %+v", ptInf.Stats())
		case <-time.After(50 * time.Millisecond):
		}
	}
	ptAfter := ptInf.Stats().Reflector
	// A re-watch that reaches the old kube-apiserver while it shuts down is closed at once
	// without an event: a "very short watch", which relists, as in client-go (its watch()
	// returns and ListAndWatch starts over). That happens in some runs on an idle machine
	// (3 of 12 here), so one relist is allowed (its cause is not recorded in Stats); more
	// than one fails. The re-watch without a relist is what the reflector's unit tests
	// (TestConnectionRefusedRewatchesThenTooLargeRelists) pin down.
	if relists := ptAfter.Relists - ptBefore.Relists; relists > 1 || ptAfter.Lists-ptBefore.Lists != relists {
		t.Fatalf("podtemplates relisted across the restart: before %+v, after %+v", ptBefore, ptAfter)
	} else if relists == 1 {
		t.Logf("podtemplates relisted once after a very short watch on the stopping server: before %+v, after %+v", ptBefore, ptAfter)
	}
	if ptAfter.Watches <= ptBefore.Watches {
		t.Fatalf("podtemplates did not re-watch: before %+v, after %+v", ptBefore, ptAfter)
	}
}
