package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// A ScopedInformer's scope changed while it runs, on the real kube-apiserver: the selector
// change lists only the objects that enter (an exact-resourceVersion list with the old
// selector's requirement negated, which the kube-apiserver must serve for the informer not
// to fall back to a relist), an added namespace is the only one read, and what leaves
// reaches the handler as deletes while what stays is not delivered again.

// readLog records the configmap reads (lists and watches) an informer sends.
type readLog struct {
	mu    sync.Mutex
	reads []url.URL
}

func (l *readLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps") {
			l.mu.Lock()
			l.reads = append(l.reads, *r.URL)
			l.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// since returns the reads after the first n.
func (l *readLog) since(n int) []url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reads[n:])
}

func (l *readLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reads)
}

// lineLog records log lines' messages.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.lines = append(l.lines, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return nil
}
func (l *lineLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lineLog) WithGroup(string) slog.Handler      { return l }

func (l *lineLog) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// scopeCalls records a scoped informer's handler calls as "add ns/name", "update ns/name",
// "delete ns/name".
type scopeCalls struct{ ch chan string }

func (c *scopeCalls) OnAdd(o *infConfigMap, _ bool) { c.ch <- "add " + o.Namespace + "/" + o.Name }
func (c *scopeCalls) OnUpdate(_, o *infConfigMap)   { c.ch <- "update " + o.Namespace + "/" + o.Name }
func (c *scopeCalls) OnDelete(o *infConfigMap, _ bool) {
	c.ch <- "delete " + o.Namespace + "/" + o.Name
}

// upTo returns the calls up to and including want, sorted, excluding want.
func (c *scopeCalls) upTo(t *testing.T, want string) []string {
	t.Helper()
	var out []string
	for {
		select {
		case s := <-c.ch:
			if s == want {
				slices.Sort(out)
				return out
			}
			out = append(out, s)
		case <-time.After(time.Minute):
			t.Fatalf("no %q within a minute; calls so far %v", want, out)
		}
	}
}

func TestScopedInformerOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns1, ns2 := newNamespace(t, c), newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reads := &readLog{}
	ac := acClient(t, c, func(cfg *apiclient.Config) {
		cfg.QPS = -1
		cfg.WrapTransport = reads.wrap
	})
	cms := apiclient.NewResource[*infConfigMap](ac, infConfigMaps)
	mk := func(ns, name string, lbls map[string]string) {
		t.Helper()
		cm := &infConfigMap{TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
		if _, err := cms.Namespace(ns).Create(ctx, cm, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk(ns1, "p1", map[string]string{"app": "web", "tier": "fe"})
	mk(ns1, "p2", map[string]string{"app": "web", "tier": "be"})
	mk(ns1, "p3", map[string]string{"app": "db"})
	mk(ns1, "p4", map[string]string{"app": "cache", "tier": "be"})
	mk(ns2, "q1", map[string]string{"app": "web", "tier": "be"})
	mk(ns2, "q2", map[string]string{"app": "web", "tier": "fe"})

	logs := &lineLog{}
	inf := informer.NewScoped(ac, infConfigMaps,
		informer.Scope{Namespaces: []string{ns1}, LabelSelector: labels.MustParse("app=web")},
		informer.Options[*infConfigMap]{Logger: slog.New(logs)})
	calls := &scopeCalls{ch: make(chan string, 100)}
	if _, err := inf.AddEventHandler(calls); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(runCtx) }()
	defer func() { stop(); <-done }()
	select {
	case <-inf.Synced():
	case <-ctx.Done():
		t.Fatal("the scoped informer did not sync")
	}
	// A marker: an object created in scope after a change; every call the change caused
	// comes before its add (one ordered stream: the change's deltas, then the watch).
	marker := func(ns, name string) []string {
		t.Helper()
		mk(ns, name, map[string]string{"app": "web", "tier": "be"})
		return calls.upTo(t, "add "+ns+"/"+name)
	}
	if got := marker(ns1, "m0"); !slices.Equal(got, []string{"add " + ns1 + "/p1", "add " + ns1 + "/p2"}) {
		t.Fatalf("initial calls %v", got)
	}

	// The selector changes from app=web to tier=be: p1 leaves, p4 enters, p2 and m0 stay
	// and are not delivered again. One list, of exactly what enters.
	n := reads.len()
	if err := inf.SetScope(ctx, informer.Scope{Namespaces: []string{ns1}, LabelSelector: labels.MustParse("tier=be")}); err != nil {
		t.Fatal(err)
	}
	if got := marker(ns1, "m1"); !slices.Equal(got, []string{"add " + ns1 + "/p4", "delete " + ns1 + "/p1"}) {
		t.Fatalf("calls after the selector change: %v", got)
	}
	var lists []string
	for _, u := range reads.since(n) {
		if u.Query().Get("watch") != "true" && u.Query().Get("watch") != "1" {
			lists = append(lists, u.Query().Get("labelSelector")+" "+u.Query().Get("resourceVersionMatch"))
		}
	}
	if !slices.Equal(lists, []string{"tier=be,app!=web Exact"}) {
		t.Fatalf("lists after the selector change: %v", lists)
	}
	if l := logs.containing("relisting"); len(l) > 0 {
		t.Fatalf("the selector change fell back to a relist: %v", l)
	}

	// ns2 joins: only ns2 is read, q1 enters.
	n = reads.len()
	if err := inf.SetScope(ctx, informer.Scope{Namespaces: []string{ns1, ns2}, LabelSelector: labels.MustParse("tier=be")}); err != nil {
		t.Fatal(err)
	}
	if got := marker(ns2, "m2"); !slices.Equal(got, []string{"add " + ns2 + "/q1"}) {
		t.Fatalf("calls after adding %s: %v", ns2, got)
	}
	for _, u := range reads.since(n) {
		if !strings.Contains(u.Path, "/namespaces/"+ns2+"/") {
			t.Fatalf("adding %s read %s", ns2, u.String())
		}
	}

	// ns1 leaves: its cached objects go as deletes, nothing is read, ns2's stay.
	n = reads.len()
	if err := inf.SetScope(ctx, informer.Scope{Namespaces: []string{ns2}, LabelSelector: labels.MustParse("tier=be")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"delete " + ns1 + "/m0", "delete " + ns1 + "/m1", "delete " + ns1 + "/p2", "delete " + ns1 + "/p4"}
	if got := marker(ns2, "m3"); !slices.Equal(got, want) {
		t.Fatalf("calls after removing %s: %v, want %v", ns1, got, want)
	}
	for _, u := range reads.since(n) {
		if strings.Contains(u.Path, "/namespaces/"+ns1+"/") {
			t.Fatalf("removing %s read %s", ns1, u.String())
		}
	}
	var cached []string
	for _, o := range inf.Lister().List(labels.Everything()) {
		cached = append(cached, o.Namespace+"/"+o.Name)
	}
	slices.Sort(cached)
	if want := []string{ns2 + "/m2", ns2 + "/m3", ns2 + "/q1"}; !slices.Equal(cached, want) {
		t.Fatalf("cache %v, want %v", cached, want)
	}
}
