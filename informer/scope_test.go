package informer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
)

func mkLabeled(t *testing.T, s *apitest.Server, ns, name string, lbls map[string]any) apitest.Object {
	t.Helper()
	o, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": name, "labels": lbls}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mkNamespaces(t *testing.T, s *apitest.Server, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": n}}); err != nil {
			t.Fatal(err)
		}
	}
}

// runScoped runs a ScopedInformer of ConfigMaps in scope with a recording handler, and
// waits for its sync.
func runScoped(t *testing.T, s *apitest.Server, scope Scope) (*ScopedInformer[*testobj.ConfigMap], *calls) {
	t.Helper()
	inf := NewScoped[*testobj.ConfigMap](unlimitedClient(t, s), testobj.ConfigMapGVR, scope, Options[*testobj.ConfigMap]{Logger: testLogger(t)})
	h := newCalls()
	if _, err := inf.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wait(t, inf.Synced(), "the scoped informer's sync")
	return inf, h
}

// takeCalls returns the handler's next n calls, without their resourceVersions, sorted.
func takeCalls(t *testing.T, h *calls, n int) []string {
	t.Helper()
	var out []string
	for range n {
		f := strings.Fields(h.next(t))
		out = append(out, f[0]+" "+f[1])
	}
	slices.Sort(out)
	return out
}

// quiet waits until the informer's handler has been handed everything queued, then fails
// if it got a call.
func quiet(t *testing.T, inf *ScopedInformer[*testobj.ConfigMap], h *calls) {
	t.Helper()
	if err := waitIdle(inf); err != nil {
		t.Fatal(err)
	}
	h.none(t)
}

// waitIdle waits until no handler of inf has a pending notification.
func waitIdle(inf *ScopedInformer[*testobj.ConfigMap]) error {
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		busy := false
		for _, b := range inf.Stats().HandlerBacklogs {
			busy = busy || b.Pending > 0
		}
		if !busy {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return context.DeadlineExceeded
}

func listsSince(s *apitest.Server, seq int64) []apitest.Request {
	var out []apitest.Request
	for _, r := range s.RequestsFor(apitest.VerbList, "configmaps") {
		if r.Seq > seq {
			out = append(out, r)
		}
	}
	return out
}

// readsSince returns the namespaces of the lists and watches since seq (a streaming list is
// a watch with sendInitialEvents).
func readsSince(s *apitest.Server, seq int64) []string {
	var out []string
	for _, r := range s.RequestsMatching(apitest.RequestFilter{Resource: "configmaps", After: seq}) {
		if r.Verb == apitest.VerbList || r.Verb == apitest.VerbWatch {
			out = append(out, string(r.Verb)+" "+r.Namespace)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestScopedInformerAddsAndRemovesNamespaces(t *testing.T) {
	s := newServer(t)
	mkNamespaces(t, s, "a", "b", "c")
	mkCM(t, s, "a", "x", nil)
	mkCM(t, s, "b", "y", nil)
	mkCM(t, s, "c", "z", nil)
	inf, h := runScoped(t, s, Scope{Namespaces: []string{"a", "b"}})
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add a/x", "add b/y"}) {
		t.Fatalf("initial calls %v", got)
	}
	ctx := ctxT(t)

	// A namespace added: only it is listed, and only its objects are delivered.
	seq := s.LastRequestSeq()
	if err := inf.SetScope(ctx, Scope{Namespaces: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if reads := readsSince(s, seq); !slices.Equal(reads, []string{"watch c"}) {
		t.Fatalf("reads after adding c: %v, want c's streaming list only", reads)
	}
	if got := takeCalls(t, h, 1); !slices.Equal(got, []string{"add c/z"}) {
		t.Fatalf("calls after adding c: %v", got)
	}
	quiet(t, inf, h)

	// A namespace removed: its objects leave as deletes, nothing is listed, its watch goes.
	seq = s.LastRequestSeq()
	if err := inf.SetScope(ctx, Scope{Namespaces: []string{"b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 1); !slices.Equal(got, []string{"delete a/x"}) {
		t.Fatalf("calls after removing a: %v", got)
	}
	if reads := readsSince(s, seq); len(reads) != 0 {
		t.Fatalf("reads after removing a: %v", reads)
	}
	if err := s.WaitFor(ctx, func() bool {
		for _, w := range s.Watches("configmaps") {
			if w.Namespace == "a" {
				return false
			}
		}
		return true
	}); err != nil {
		t.Fatal("the removed namespace is still watched")
	}
	mkCM(t, s, "a", "later", nil) // out of scope now
	mkCM(t, s, "c", "new", nil)
	if got := takeCalls(t, h, 1); !slices.Equal(got, []string{"add c/new"}) {
		t.Fatalf("calls after creates in a and c: %v", got)
	}
	names := func() []string {
		var out []string
		for _, o := range inf.Lister().List(labels.Everything()) {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"b/y", "c/new", "c/z"}) {
		t.Fatalf("cache %v", got)
	}
	if _, err := inf.Lister().Namespace("c").Get("z"); err != nil {
		t.Fatal(err)
	}
}

func TestScopedInformerChangesItsLabelSelector(t *testing.T) {
	s := newServer(t)
	mkLabeled(t, s, "default", "p1", map[string]any{"app": "web", "tier": "fe"})
	mkLabeled(t, s, "default", "p2", map[string]any{"app": "web", "tier": "be"})
	mkLabeled(t, s, "default", "p3", map[string]any{"app": "db"})
	mkLabeled(t, s, "default", "p4", map[string]any{"app": "cache", "tier": "be"})
	inf, h := runScoped(t, s, Scope{LabelSelector: labels.MustParse("app=web")})
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add default/p1", "add default/p2"}) {
		t.Fatalf("initial calls %v", got)
	}
	// The handlers may see the list before the reflector records its resourceVersion (it
	// does once the store took the list): wait for the state read next, the server's own
	// resourceVersion, as nothing is written meanwhile.
	pollUntil(t, "the informer at the server's resourceVersion", func() bool { return inf.LastSyncResourceVersion() == s.ResourceVersion() })
	rv := inf.LastSyncResourceVersion()
	ctx := ctxT(t)

	seq := s.LastRequestSeq()
	if err := inf.SetScope(ctx, Scope{LabelSelector: labels.MustParse("tier=be")}); err != nil {
		t.Fatal(err)
	}
	// p1 leaves, p4 enters, p2 (in both) is not delivered again.
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add default/p4", "delete default/p1"}) {
		t.Fatalf("calls after the selector change: %v", got)
	}
	quiet(t, inf, h)
	// Only what changed was listed: tier=be objects without app=web, at the cache's
	// resourceVersion; the watch resumed there with the new selector.
	lists := listsSince(s, seq)
	if len(lists) != 1 || lists[0].Param("labelSelector") != "tier=be,app!=web" || lists[0].Param("resourceVersion") != rv ||
		lists[0].Param("resourceVersionMatch") != "Exact" {
		t.Fatalf("LIST requests after the selector change: %+v", lists)
	}
	w, err := s.WaitForRequest(ctx, apitest.RequestFilter{Verb: apitest.VerbWatch, After: seq})
	if err != nil {
		t.Fatal(err)
	}
	if w.Param("labelSelector") != "tier=be" || w.Param("resourceVersion") != rv {
		t.Fatalf("watch after the selector change: %s", w.Query.Encode())
	}
	// The new selector applies to later changes: p2 leaves by a label change, p3 enters.
	if _, err := s.Mutate("configmaps", "default", "p2", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "web", "tier": "fe"}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mutate("configmaps", "default", "p3", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "db", "tier": "be"}
	}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add default/p3", "delete default/p2"}) {
		t.Fatalf("calls after label changes: %v", got)
	}

	// A selector whose old form has no negation (>) relists; only changes are delivered.
	// Each change is awaited: a change made before the previous one's list completed would
	// abort that list, which then changes nothing (a failed list changes nothing).
	if err := inf.SetScope(ctx, Scope{LabelSelector: labels.MustParse("tier=be,n>3")}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"delete default/p3", "delete default/p4"}) {
		t.Fatalf("calls after the change to n>3: %v", got)
	}
	if err := inf.SetScope(ctx, Scope{LabelSelector: labels.MustParse("tier=be")}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add default/p3", "add default/p4"}) {
		t.Fatalf("calls after the change back from n>3: %v", got)
	}
	quiet(t, inf, h)
}

func TestScopedInformerSwitchesBetweenAllAndSomeNamespaces(t *testing.T) {
	s := newServer(t)
	mkNamespaces(t, s, "a", "b")
	mkCM(t, s, "a", "x", nil)
	mkCM(t, s, "b", "y", nil)
	inf, h := runScoped(t, s, Scope{})
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add a/x", "add b/y"}) {
		t.Fatalf("initial calls %v", got)
	}
	ctx := ctxT(t)
	if err := inf.SetScope(ctx, Scope{Namespaces: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 1); !slices.Equal(got, []string{"delete b/y"}) {
		t.Fatalf("calls after narrowing to a: %v", got)
	}
	quiet(t, inf, h)
	mkCM(t, s, "b", "z", nil)
	if err := inf.SetScope(ctx, Scope{}); err != nil {
		t.Fatal(err)
	}
	if got := takeCalls(t, h, 2); !slices.Equal(got, []string{"add b/y", "add b/z"}) {
		t.Fatalf("calls after widening to all: %v", got)
	}
	quiet(t, inf, h)
	if n := inf.GetIndexer().Len(); n != 3 {
		t.Fatalf("cache holds %d objects, want 3", n)
	}
}
