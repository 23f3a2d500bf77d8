package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"go.yaml.in/yaml/v3"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/examples/deployment"
)

// examples/deployment on the real kube-apiserver, started by runner's Runner with
// leader election: create, scale down and up, a Pod deleted behind its back, events,
// deletion through the finalizer; and a controller whose CRD is missing is skipped with the
// reason in /readyz.

// installDeploymentCRD applies examples/deployment/crd.yaml and waits until discovery
// lists the resource.
func installDeploymentCRD(t *testing.T, ctx context.Context, ac *apiclient.Client) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(deployment.CRDYAML, &obj); err != nil {
		t.Fatal(err)
	}
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	if _, err := crds.Create(ctx, &meta.Unstructured{Object: obj}, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for {
		ac.InvalidateDiscovery()
		res, _ := ac.ServerResources(ctx)
		for _, r := range res {
			if r.GroupVersionResource == deployment.DeploymentGVR {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%v not served: %v", deployment.DeploymentGVR, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestMiniDeploymentOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ac := acClient(t, c, nil)
	installDeploymentCRD(t, ctx, ac)

	mgr, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler),
		LeaderElection: true, LeaderElectionID: "minideployment", LeaderElectionNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	widgets := meta.GroupVersionResource{Group: "e2e.informerkit.io", Version: "v1", Resource: "nothere"}
	r, err := runner.New(mgr, []runner.Descriptor{deployment.Descriptor(),
		{Name: "needs-missing-crd", Resources: []meta.GroupVersionResource{widgets},
			Init: func(context.Context, runner.ControllerContext) (bool, error) { return true, nil }}},
		runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		stopRun()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	mds := apiclient.NewResource[*deployment.MiniDeployment](ac, deployment.DeploymentGVR)
	pods := apiclient.NewResource[*deployment.Pod](ac, deployment.PodGVR)
	three := int32(3)
	md := &deployment.MiniDeployment{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: deployment.Spec{Replicas: &three, Template: deployment.PodTemplate{Spec: deployment.PodSpec{
			Containers: []deployment.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}}}}}
	md.TypeMeta = meta.TypeMeta{APIVersion: deployment.DeploymentKind.APIVersion(), Kind: deployment.DeploymentKind.Kind}
	if _, err := mds.Namespace(ns).Create(ctx, md, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	livePods := func() []*deployment.Pod {
		l, err := pods.Namespace(ns).List(ctx, apiclient.ListOptions{LabelSelector: deployment.LabelOwner + "=web"})
		if err != nil {
			t.Fatal(err)
		}
		var out []*deployment.Pod
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
		return out
	}
	settled := func(n int) func() (bool, string) {
		return func() (bool, string) {
			d, err := mds.Namespace(ns).Get(ctx, "web", apiclient.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			live := len(livePods())
			ok := live == n && d.Status.Replicas == int32(n) && d.Status.ObservedGeneration == d.Generation &&
				conditions.IsTrue(d.Status.Conditions, deployment.ConditionAvailable)
			return ok, fmt.Sprintf("%d live pods, status %+v", live, d.Status)
		}
	}
	poll(t, ctx, "3 pods", settled(3))
	d, err := mds.Namespace(ns).Get(ctx, "web", apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Finalizers) != 1 || d.Finalizers[0] != deployment.Finalizer {
		t.Errorf("finalizers %q", d.Finalizers)
	}

	// Scale down, then up (updates of spec.replicas).
	setReplicas := func(n int32) {
		for {
			d, err := mds.Namespace(ns).Get(ctx, "web", apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d.Spec.Replicas = &n
			if _, err = mds.Namespace(ns).Update(ctx, d, apiclient.UpdateOptions{}); err == nil {
				return
			} else if !meta.IsConflict(err) {
				t.Fatal(err)
			}
		}
	}
	setReplicas(1)
	poll(t, ctx, "1 pod", settled(1))
	setReplicas(2)
	poll(t, ctx, "2 pods", settled(2))
	victim := livePods()[0]
	if err := pods.Namespace(ns).Delete(ctx, victim.Name, apiclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "2 pods again", func() (bool, string) {
		ok, s := settled(2)()
		for _, p := range livePods() {
			if p.Name == victim.Name {
				return false, s
			}
		}
		return ok, s
	})

	// Events: the kube-apiserver holds them.
	evs := apiclient.NewResource[*meta.Unstructured](ac, meta.GroupVersionResource{Version: "v1", Resource: "events"})
	poll(t, ctx, "SuccessfulCreate and SuccessfulDelete events", func() (bool, string) {
		l, err := evs.Namespace(ns).List(ctx, apiclient.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var reasons []string
		for _, e := range l.Items {
			reasons = append(reasons, stringAt(e, "reason"))
		}
		joined := strings.Join(reasons, ",")
		return strings.Contains(joined, "SuccessfulCreate") && strings.Contains(joined, "SuccessfulDelete"), joined
	})

	// /readyz: the controller is ready, the one without its CRD says why.
	rec := httptest.NewRecorder()
	mgr.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz?verbose", nil))
	body := rec.Body.String()
	for _, want := range []string{"[+]controller-minideployment ok",
		"[-]controller-needs-missing-crd failed: resource e2e.informerkit.io/v1/nothere is not served"} {
		if !strings.Contains(body, want) {
			t.Errorf("readyz lacks %q:\n%s", want, body)
		}
	}

	// Deletion: the finalizer holds the MiniDeployment until its Pods are gone (no garbage
	// collector runs in this cluster).
	if err := mds.Namespace(ns).Delete(ctx, "web", apiclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "MiniDeployment and pods gone", func() (bool, string) {
		_, err := mds.Namespace(ns).Get(ctx, "web", apiclient.GetOptions{})
		l, lerr := pods.Namespace(ns).List(ctx, apiclient.ListOptions{})
		if lerr != nil {
			return false, lerr.Error()
		}
		return meta.IsNotFound(err) && len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items))
	})
}

func stringAt(u *meta.Unstructured, field string) string {
	s, _ := u.Object[field].(string)
	return s
}

// poll evaluates cond every 100 ms until it holds, failing with its last description when
// ctx ends.
func poll(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last: %s)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// A controller whose initializer watches a resource the kube-apiserver does not serve (its
// CRD not installed) makes the runner fail at once with the resource's name, instead of a
// cache sync that would time out after CacheSyncTimeout.
func TestRunnerMissingCRDOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	mgr, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler), CacheSyncTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	missing := meta.GroupVersionResource{Group: "e2e.informerkit.io", Version: "v1", Resource: "nothere"}
	r, err := runner.New(mgr, []runner.Descriptor{{Name: "nothere",
		Init: func(_ context.Context, cc runner.ControllerContext) (bool, error) {
			_, err := controller.InformerForWithOptions[*meta.ObjectMeta](cc.Manager, controller.InformerOptions{Resource: missing})
			return err == nil, err
		}}}, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = r.Run(ctx)
	var nse *runner.NotServedError
	if !errors.As(err, &nse) || nse.Resource != missing ||
		!strings.Contains(err.Error(), "resource e2e.informerkit.io/v1/nothere is not served") {
		t.Fatalf("Run: %v", err)
	}
}
