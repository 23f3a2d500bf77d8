// Command controllerruntime is benchctl's controller process built on controller-runtime
// v0.25.2 with its defaults (ctrl.GetConfig: no client-side rate limit, protobuf for
// built-in kinds; the manager's cache of full typed objects; one worker per controller),
// but for the metrics server, on a free loopback port instead of :8080. It runs the same
// two controllers as the informerkit process, written as a kubebuilder project writes them:
// Deployments own their Pods (listed through a field index on the controller owner, as the
// kubebuilder book's CronJob does), Applications own one ConfigMap each.
//
//	controllerruntime -deployments N -apps M      (KUBECONFIG names the cluster)
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/informerkit/informerkit/bench/internal/ctlbench"
	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
)

// Application is the custom resource, as a kubebuilder project declares it.
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              apptypes.ApplicationSpec   `json:"spec"`
	Status            apptypes.ApplicationStatus `json:"status"`
}

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

var groupVersion = schema.GroupVersion{Group: ctlbench.AppGroup, Version: ctlbench.AppVersion}

func main() {
	deployments := flag.Int("deployments", 0, "Deployments to reconcile once before ready")
	apps := flag.Int("apps", 0, "Applications to reconcile once before ready")
	flag.Parse()
	ctx, stop := context.WithCancel(ctrl.SetupSignalHandler())
	defer stop()
	rep := ctlbench.NewReporter(*deployments + *apps)
	go rep.Serve(ctx, os.Stdin, stop)
	if err := run(ctx, rep); err != nil {
		fmt.Fprintln(os.Stderr, "controllerruntime:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rep *ctlbench.Reporter) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	scheme.AddKnownTypes(groupVersion, &Application{}, &ApplicationList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "127.0.0.1:0"}})
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, ctlbench.OwnerIndex, func(o client.Object) []string {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" {
			return nil
		}
		return []string{ref.Name}
	}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&appsv1.Deployment{}).Owns(&corev1.Pod{}).
		Complete(&deployments{Client: mgr.GetClient(), scheme: scheme, rep: rep}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&Application{}).Owns(&corev1.ConfigMap{}).
		Complete(&applications{Client: mgr.GetClient(), scheme: scheme, rep: rep}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// deployments keeps each Deployment's Pods at its replica count and writes its status.
type deployments struct {
	client.Client
	scheme *runtime.Scheme
	rep    *ctlbench.Reporter
}

func (r *deployments) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	stamp, err := r.reconcile(ctx, req)
	r.rep.Reconciled("Deployment", req.String(), stamp, err)
	return ctrl.Result{}, err
}

func (r *deployments) reconcile(ctx context.Context, req ctrl.Request) (stamp string, err error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	stamp = d.Annotations[ctlbench.StampAnnotation]
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(req.Namespace), client.MatchingFields{ctlbench.OwnerIndex: req.Name}); err != nil {
		return stamp, err
	}
	active := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	want := 1
	if d.Spec.Replicas != nil {
		want = int(*d.Spec.Replicas)
	}
	for range want - len(active) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, GenerateName: d.Name + "-",
			Labels: maps.Clone(d.Spec.Template.Labels), Annotations: maps.Clone(d.Spec.Template.Annotations)},
			Spec: *d.Spec.Template.Spec.DeepCopy()}
		if err := controllerutil.SetControllerReference(&d, p, r.scheme); err != nil {
			return stamp, err
		}
		r.rep.Wrote()
		if err := r.Create(ctx, p); err != nil {
			return stamp, err
		}
	}
	if len(active) > want {
		slices.SortFunc(active, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		for i := range active[want:] {
			r.rep.Wrote()
			if err := r.Delete(ctx, &active[want+i]); client.IgnoreNotFound(err) != nil {
				return stamp, err
			}
		}
		active = active[:want]
	}
	next := d.DeepCopy()
	next.Status.ObservedGeneration, next.Status.Replicas, next.Status.ReadyReplicas = d.Generation, int32(len(active)), 0
	for _, p := range active {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				next.Status.ReadyReplicas++
			}
		}
	}
	next.Status.AvailableReplicas = next.Status.ReadyReplicas
	if next.Status.ObservedGeneration == d.Status.ObservedGeneration && next.Status.Replicas == d.Status.Replicas &&
		next.Status.ReadyReplicas == d.Status.ReadyReplicas && next.Status.AvailableReplicas == d.Status.AvailableReplicas {
		return stamp, nil
	}
	r.rep.Wrote()
	return stamp, r.Status().Patch(ctx, next, client.MergeFrom(&d))
}

// applications keeps one ConfigMap per Application in sync with its spec.
type applications struct {
	client.Client
	scheme *runtime.Scheme
	rep    *ctlbench.Reporter
}

func (r *applications) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	stamp, err := r.reconcile(ctx, req)
	r.rep.Reconciled("Application", req.String(), stamp, err)
	return ctrl.Result{}, err
}

func (r *applications) reconcile(ctx context.Context, req ctrl.Request) (stamp string, err error) {
	var app Application
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	stamp = app.Annotations[ctlbench.StampAnnotation]
	want := ctlbench.ManifestData(app.Spec)
	var cm corev1.ConfigMap
	err = r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name + ctlbench.ManifestSuffix}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + ctlbench.ManifestSuffix}, Data: want}
		if err := controllerutil.SetControllerReference(&app, &cm, r.scheme); err != nil {
			return stamp, err
		}
		r.rep.Wrote()
		return stamp, r.Create(ctx, &cm)
	case err != nil:
		return stamp, err
	case maps.Equal(cm.Data, want):
		return stamp, nil
	}
	cm.Data = want
	r.rep.Wrote()
	return stamp, r.Update(ctx, &cm)
}
