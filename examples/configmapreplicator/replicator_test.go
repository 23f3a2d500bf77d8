package configmapreplicator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// The tests run every informer with the cache mutation detector.
func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}

const timeout = 60 * time.Second

// env is the workbench (controller/controllertest) with the CRD, the namespaces src, a, b
// (labelled for replication) and c, and the source ConfigMap src/cfg.
type env struct {
	*controllertest.Env
	srv *apitest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ce := controllertest.New(t, controllertest.Options{CRDs: [][]byte{CRDYAML}, Timeout: timeout})
	e := &env{Env: ce, srv: ce.Server}
	for ns, labelled := range map[string]bool{"src": false, "a": true, "b": true, "c": false} {
		meta := map[string]any{"name": ns, "labels": map[string]any{"tier": ns}}
		if labelled {
			meta["labels"].(map[string]any)[LabelReplicateInto] = "true"
		}
		e.create(t, "namespaces", map[string]any{"metadata": meta})
	}
	e.create(t, "configmaps", map[string]any{"metadata": map[string]any{"namespace": "src", "name": "cfg"}, "data": map[string]any{"k": "v1"}})
	return e
}

func (e *env) create(_ *testing.T, resource string, obj map[string]any) { e.Create(resource, obj) }

func replicationObj(name string, selector map[string]any) map[string]any {
	return map[string]any{"apiVersion": ReplicationKind.APIVersion(), "kind": ReplicationKind.Kind, "metadata": map[string]any{"name": name},
		"spec": map[string]any{"source": map[string]any{"namespace": "src", "name": "cfg"},
			"namespaceSelector": map[string]any{"matchLabels": selector}}}
}

// start runs a manager with the controller until the test ends.
func (e *env) start(_ *testing.T) *controllertest.Running {
	return e.StartManager(controller.ManagerOptions{}, func(m *controller.Manager) error {
		_, err := Setup(m, Options{})
		return err
	})
}

// status returns the replication's status as "copies=N [ns...] message".
func (e *env) status(name string) string {
	o, err := e.srv.Get(ReplicationKind.Resource, "", name)
	if err != nil {
		return err.Error()
	}
	var r ConfigMapReplication
	_ = o.Into(&r)
	return fmt.Sprintf("gen=%d copies=%d %v %s", r.Status.ObservedGeneration, r.Status.Copies, r.Status.Namespaces, r.Status.Message)
}

// copies returns "ns=value" of the copies' k, sorted by namespace.
func (e *env) copies() string {
	var out []string
	for _, ns := range []string{"a", "b", "c", "src"} {
		o, err := e.srv.Get("configmaps", ns, "cfg")
		if err != nil || ns == "src" {
			continue
		}
		if o.Labels()[LabelReplication] == "" {
			out = append(out, ns+"=foreign")
			continue
		}
		data, _ := o["data"].(map[string]any)
		out = append(out, fmt.Sprintf("%s=%v", ns, data["k"]))
	}
	return strings.Join(out, " ")
}

func (e *env) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := e.srv.WaitFor(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s; copies %q, status %q", what, e.copies(), e.status("r"))
	}
}

func TestSpecChangeMovesCopiesAndStatusTracksGeneration(t *testing.T) {
	e := newEnv(t)
	e.start(t)
	e.create(t, ReplicationKind.Resource, replicationObj("r", map[string]any{LabelReplicateInto: "true"}))
	e.waitFor(t, "copies in a and b", func() bool {
		return e.copies() == "a=v1 b=v1" && e.status("r") == "gen=1 copies=2 [a b] "
	})
	// Select namespace c by name instead: the generation grows, copies move.
	if _, err := e.srv.Mutate(ReplicationKind.Resource, "", "r", func(o apitest.Object) {
		o["spec"].(map[string]any)["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"tier": "c"}}
	}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "the copy moved to c", func() bool { return e.copies() == "c=v1" && e.status("r") == "gen=2 copies=1 [c] " })
	// matchExpressions select too.
	setSelector := func(sel map[string]any) {
		t.Helper()
		if _, err := e.srv.Mutate(ReplicationKind.Resource, "", "r", func(o apitest.Object) {
			o["spec"].(map[string]any)["namespaceSelector"] = sel
		}); err != nil {
			t.Fatal(err)
		}
	}
	setSelector(map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"a", "c"}}}})
	e.waitFor(t, "copies in a and c", func() bool { return e.copies() == "a=v1 c=v1" && e.status("r") == "gen=3 copies=2 [a c] " })
	// An invalid selector (In without values) changes nothing but the status, which says
	// why in the kube-apiserver's words.
	setSelector(map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In"}}})
	want := "gen=4 copies=2 [a c] spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
	e.waitFor(t, "the invalid selector reported", func() bool { return e.copies() == "a=v1 c=v1" && e.status("r") == want })
}

func TestForeignConfigMapIsLeftAloneAndReported(t *testing.T) {
	e := newEnv(t)
	e.create(t, "configmaps", map[string]any{"metadata": map[string]any{"namespace": "b", "name": "cfg"}, "data": map[string]any{"k": "mine"}})
	e.start(t)
	e.create(t, ReplicationKind.Resource, replicationObj("r", map[string]any{LabelReplicateInto: "true"}))
	e.waitFor(t, "a copy in a only", func() bool {
		return e.copies() == "a=v1 b=foreign" && e.status("r") == "gen=1 copies=1 [a] b/cfg exists and is not managed by r"
	})
	o, _ := e.srv.Get("configmaps", "b", "cfg")
	if o["data"].(map[string]any)["k"] != "mine" {
		t.Fatal("the foreign ConfigMap was overwritten")
	}
}

func TestRestartFindsEverythingInSyncAndWritesNothing(t *testing.T) {
	e := newEnv(t)
	e.create(t, ReplicationKind.Resource, replicationObj("r", map[string]any{LabelReplicateInto: "true"}))
	first := e.runOnce(t)
	if first == 0 {
		t.Fatal("the first run wrote nothing")
	}
	if second := e.runOnce(t); second != 0 {
		t.Fatalf("a restarted controller made %d writes to an up-to-date world", second)
	}
}

// runOnce runs a manager until the world has converged and the controller has reconciled
// the replication and found it in sync, and returns the number of writes (creates, updates,
// deletes) it made.
func (e *env) runOnce(t *testing.T) int {
	t.Helper()
	seq := e.srv.LastRequestSeq()
	mgr, err := controller.NewManager(e.srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	inSync := make(chan struct{}, 100)
	trace := func(stage, msg string) {
		if stage == "reconcile" && strings.HasPrefix(msg, "r: in sync, nothing to write (") {
			inSync <- struct{}{}
		}
	}
	if _, err := Setup(mgr, Options{Trace: trace}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.waitFor(t, "convergence", func() bool { return e.copies() == "a=v1 b=v1" && e.status("r") == "gen=1 copies=2 [a b] " })
	select {
	case <-inSync:
	case <-time.After(timeout):
		t.Fatal("no reconcile found the replication in sync")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	writes := 0
	for _, r := range e.srv.RequestsMatching(apitest.RequestFilter{After: seq}) {
		switch r.Verb {
		case apitest.VerbCreate, apitest.VerbUpdate, apitest.VerbDelete, apitest.VerbPatch:
			// Access reviews (the Manager's permission check at start) change nothing.
			if r.Resource != "leases" && r.Resource != "selfsubjectaccessreviews.authorization.k8s.io" {
				writes++
			}
		}
	}
	return writes
}

func TestTypesRoundTrip(t *testing.T) {
	var r ConfigMapReplication
	obj := apitest.Object(replicationObj("x", map[string]any{"a": "b"}))
	if err := obj.Into(&r); err != nil {
		t.Fatal(err)
	}
	if r.Spec.Source.String() != "src/cfg" || r.Spec.NamespaceSelector.MatchLabels["a"] != "b" {
		t.Fatalf("decoded %+v", r.Spec)
	}
	var _ meta.Object = &r
}
