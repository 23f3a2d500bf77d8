package compat

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informerkit/informerkit/apitest"
)

// logCapture is a logr sink that keeps the error lines controller-runtime logs.
type logCapture struct {
	mu     sync.Mutex
	errors []string
}

func (c *logCapture) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"level"`) && !strings.Contains(args, `"error"`) {
			return
		}
		if strings.Contains(args, `"error"`) || strings.Contains(args, `"msg":"Reconciler error"`) {
			c.mu.Lock()
			c.errors = append(c.errors, prefix+" "+args)
			c.mu.Unlock()
		}
	}, funcr.Options{})
}

// expectedReconcileError reports whether a logged line is an error that any controller-runtime
// controller meets on a server under faults: one apitest injected, a conflict, or an
// AlreadyExists from CreateOrUpdate, whose Get reads a cache that has not yet seen the
// object it created (after a cut watch the reflector backs off before it watches again,
// so a few retries can fail this way before the cache catches up).
func expectedReconcileError(line string) bool {
	return strings.Contains(line, "injected by apitest") ||
		strings.Contains(line, "the object has been modified") ||
		strings.Contains(line, "already exists")
}

func (c *logCapture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

// infoReconciler keeps a ConfigMap "<deployment>-info" with the deployment's replicas and the
// number of secrets in the namespace (read from a metadata-only cache), and records events
// with both of controller-runtime's recorders.
type infoReconciler struct {
	client.Client
	mgr manager.Manager
}

func (r *infoReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var dep appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &dep); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.List(ctx, secrets, client.InNamespace(req.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-info", Namespace: dep.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"replicas": strconv.Itoa(int(*dep.Spec.Replicas)), "secrets": strconv.Itoa(len(secrets.Items))}
		return controllerutil.SetControllerReference(&dep, cm, r.Scheme())
	})
	if err != nil {
		return reconcile.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		r.mgr.GetEventRecorderFor("info-controller").Eventf(&dep, corev1.EventTypeNormal, "InfoWritten", "configmap %s %s", cm.Name, op)
		r.mgr.GetEventRecorder("info-controller").Eventf(&dep, nil, corev1.EventTypeNormal, "InfoWritten", "Write", "configmap %s %s", cm.Name, op)
	}
	return reconcile.Result{}, nil
}

// TestControllerRuntimeManager runs a controller-runtime manager with its defaults (leader
// election on a Lease, a cache with a metadata-only informer, an owned type, both event
// recorders) against apitest, through injected faults, and checks that it converges.
func TestControllerRuntimeManager(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	logs := captureKlog(t)
	crlog := &logCapture{}
	ctrl.SetLogger(crlog.logger())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(e.cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "compat-info",
		LeaderElectionNamespace: "default",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &infoReconciler{Client: mgr.GetClient(), mgr: mgr}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err = ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}).
		WatchesMetadata(secret, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			var deps appsv1.DeploymentList
			if err := mgr.GetClient().List(ctx, &deps, client.InNamespace(o.GetNamespace())); err != nil {
				return nil
			}
			var out []reconcile.Request
			for _, d := range deps.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
			}
			return out
		}), builder.OnlyMetadata).
		Complete(r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	deployment := func(name string, replicas int) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}}
	}
	info := func(name string) map[string]string {
		o, err := e.s.Get("configmaps", "default", name+"-info")
		if err != nil {
			return nil
		}
		data, _ := o["data"].(map[string]any)
		out := map[string]string{}
		for k, v := range data {
			out[k] = fmt.Sprint(v)
		}
		return out
	}
	if _, err := e.s.Create("deployments.apps", deployment("web", 2)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the info configmap", func() bool { i := info("web"); return i["replicas"] == "2" && i["secrets"] == "0" })

	// A secret (seen through the metadata-only informer) and a scale, with watches cut and
	// writes failing once.
	if _, err := e.s.Faults().CutWatches(""); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Faults().FailRequests(apitest.VerbUpdate, "configmaps", 1, 500, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s", "namespace": "default"}, "stringData": map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Mutate("deployments.apps", "default", "web", func(o apitest.Object) {
		o["spec"].(map[string]any)["replicas"] = 5
	}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the info configmap after the changes", func() bool { i := info("web"); return i["replicas"] == "5" && i["secrets"] == "1" })

	// The owner reference, the lease and the events of both recorders.
	cm, _ := e.s.Get("configmaps", "default", "web-info")
	owners, _ := cm["metadata"].(map[string]any)["ownerReferences"].([]any)
	if len(owners) != 1 || owners[0].(map[string]any)["kind"] != "Deployment" {
		t.Errorf("owner references %v", owners)
	}
	lease, err := e.s.Get("leases.coordination.k8s.io", "default", "compat-info")
	if err != nil || lease["spec"].(map[string]any)["holderIdentity"] == nil {
		t.Errorf("leader election lease: %v %v", err, lease)
	}
	e.waitFor("events from both recorders", func() bool {
		core, _, _ := e.s.List("events", "default")
		newer, _, _ := e.s.List("events.events.k8s.io", "default")
		return len(core) > 0 && len(newer) > 0
	})
	for _, l := range crlog.all() {
		if !expectedReconcileError(l) {
			t.Errorf("controller-runtime logged: %s", l)
		}
	}
	for _, l := range logs.clientErrors() {
		if strings.Contains(l, "decode") || strings.Contains(l, "Failed to") || strings.Contains(l, "unable to") {
			t.Errorf("client-go: %s", l)
		}
	}
}
