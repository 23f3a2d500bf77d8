// Command informerkit is benchctl's controller process built on informerkit's controller
// kit (controller.Manager, Builder, controller/client), with its defaults but one: the
// client's rate limit is off, as controller-runtime's is by default (informerkit's
// default is 50 requests/s). It runs two controllers: one keeps each Deployment's Pods
// (which it owns, as a ReplicaSet would) at its replica count and writes the Deployment's
// status; the other keeps one ConfigMap per Application (a custom resource) in sync with
// its spec. It declares the fields it reads: Pods are their metadata and conditions.
//
//	informerkit -deployments N -apps M      (KUBECONFIG names the cluster; benchctl runs it)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/bench/internal/ctlbench"
	"github.com/informerkit/informerkit/bench/internal/fleet/apptypes"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Deployment is what the controller reads of a Deployment: the replica count, the
// template (its spec kept as written, to create Pods from) and the status it writes.
type Deployment struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            DeploymentSpec   `json:"spec"`
	Status          DeploymentStatus `json:"status"`
}

// DeploymentSpec is the part of a Deployment's spec the controller reads.
type DeploymentSpec struct {
	Replicas *int32      `json:"replicas,omitempty"`
	Template PodTemplate `json:"template"`
}

// PodTemplate is a Pod template: labels, annotations and the spec as written.
type PodTemplate struct {
	Metadata struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec json.RawMessage `json:"spec"`
}

// DeploymentStatus is what the controller writes.
type DeploymentStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	Replicas           int32 `json:"replicas,omitempty"`
	ReadyReplicas      int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas  int32 `json:"availableReplicas,omitempty"`
}

// Pod is what the controller reads of a Pod: metadata and conditions.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Status          struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

// NewPod is a Pod the controller creates: a template's metadata and spec.
type NewPod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            json.RawMessage `json:"spec"`
}

// Application is the custom resource (its own API: every field declared).
type Application struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            apptypes.ApplicationSpec   `json:"spec"`
	Status          apptypes.ApplicationStatus `json:"status"`
}

// ConfigMap is an Application's ConfigMap.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

func ready(p *Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func main() {
	deployments := flag.Int("deployments", 0, "Deployments to reconcile once before ready")
	apps := flag.Int("apps", 0, "Applications to reconcile once before ready")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep := ctlbench.NewReporter(*deployments + *apps)
	go rep.Serve(ctx, os.Stdin, stop)
	if err := run(ctx, rep); err != nil {
		fmt.Fprintln(os.Stderr, "informerkit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rep *ctlbench.Reporter) error {
	reg := kinds.NewRegistry()
	for _, r := range []struct {
		t    any
		info kinds.Info
	}{
		{(*Deployment)(nil), kinds.Deployment}, {(*Pod)(nil), kinds.Pod}, {(*NewPod)(nil), kinds.Pod},
		{(*ConfigMap)(nil), kinds.ConfigMap},
		{(*Application)(nil), kinds.Info{Group: ctlbench.AppGroup, Version: ctlbench.AppVersion, Kind: "Application", Resource: "applications", Namespaced: true}},
	} {
		if err := reg.Register(reflect.TypeOf(r.t), r.info); err != nil {
			return err
		}
	}
	cfg, err := apiclient.LoadConfig()
	if err != nil {
		return err
	}
	cfg.QPS = -1 // no client-side limit, as controller-runtime's default
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{Kinds: reg, HTTPAddress: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	if err := setupDeployments(mgr, rep); err != nil {
		return err
	}
	if err := setupApplications(mgr, rep); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func stampOf(m meta.ObjectMeta) string { return m.Annotations[ctlbench.StampAnnotation] }

// setupDeployments wires the Deployment controller: Deployments own their Pods.
func setupDeployments(mgr *controller.Manager, rep *ctlbench.Reporter) error {
	pods := controller.Owned[*Pod]()
	deps := client.TypedFor[*Deployment](mgr.Client())
	creates := client.TypedFor[*NewPod](mgr.Client())
	podClient := client.TypedFor[*Pod](mgr.Client())
	reconcile := func(ctx context.Context, req controller.Request) (stamp string, err error) {
		d, err := deps.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
		if meta.IsNotFound(err) {
			return "", nil
		} else if err != nil {
			return "", err
		}
		stamp = stampOf(d.ObjectMeta)
		children, err := pods.ChildrenOf(d)
		if err != nil {
			return stamp, err
		}
		active := slices.DeleteFunc(children, func(p *Pod) bool { return p.DeletionTimestamp != nil })
		want := 1
		if d.Spec.Replicas != nil {
			want = int(*d.Spec.Replicas)
		}
		for range want - len(active) {
			p := &NewPod{ObjectMeta: meta.ObjectMeta{Namespace: d.Namespace, GenerateName: d.Name + "-",
				Labels: maps.Clone(d.Spec.Template.Metadata.Labels), Annotations: maps.Clone(d.Spec.Template.Metadata.Annotations)},
				Spec: d.Spec.Template.Spec}
			if err := controllerutil.SetControllerReferenceWithOptions(d, p, controllerutil.OwnerReferenceOptions{Registry: mgr.Kinds()}); err != nil {
				return stamp, err
			}
			rep.Wrote()
			if _, err := creates.Create(ctx, p, client.CreateOptions{}); err != nil {
				return stamp, err
			}
		}
		if len(active) > want {
			slices.SortFunc(active, func(a, b *Pod) int { return strings.Compare(a.Name, b.Name) })
			for _, p := range active[want:] {
				rep.Wrote()
				if err := podClient.Delete(ctx, p, client.DeleteOptions{}); err != nil && !meta.IsNotFound(err) {
					return stamp, err
				}
			}
			active = active[:want]
		}
		next := DeploymentStatus{ObservedGeneration: d.Generation, Replicas: int32(len(active))}
		for _, p := range active {
			if ready(p) {
				next.ReadyReplicas++
			}
		}
		next.AvailableReplicas = next.ReadyReplicas
		if next == d.Status {
			return stamp, nil
		}
		changed := client.DeepCopy(d)
		changed.Status = next
		rep.Wrote()
		_, err = deps.Status().PatchFrom(ctx, client.MergePatchType, d, changed, client.PatchFromOptions{})
		return stamp, err
	}
	return controller.NewBuilder(mgr, "deployments").
		For(controller.Primary[*Deployment]()).
		Owns(pods).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			stamp, err := reconcile(ctx, req)
			rep.Reconciled("Deployment", req.Namespace+"/"+req.Name, stamp, err)
			return controller.Result{}, err
		}))
}

// setupApplications wires the Application controller: each Application owns one ConfigMap.
func setupApplications(mgr *controller.Manager, rep *ctlbench.Reporter) error {
	apps := client.TypedFor[*Application](mgr.Client())
	cms := client.TypedFor[*ConfigMap](mgr.Client())
	reconcile := func(ctx context.Context, req controller.Request) (stamp string, err error) {
		app, err := apps.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
		if meta.IsNotFound(err) {
			return "", nil
		} else if err != nil {
			return "", err
		}
		stamp = stampOf(app.ObjectMeta)
		want := ctlbench.ManifestData(app.Spec)
		cm, err := cms.Get(ctx, req.Namespace, req.Name+ctlbench.ManifestSuffix, client.GetOptions{})
		switch {
		case meta.IsNotFound(err):
			cm = &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name + ctlbench.ManifestSuffix}, Data: want}
			if err := controllerutil.SetControllerReferenceWithOptions(app, cm, controllerutil.OwnerReferenceOptions{Registry: mgr.Kinds()}); err != nil {
				return stamp, err
			}
			rep.Wrote()
			_, err = cms.Create(ctx, cm, client.CreateOptions{})
			return stamp, err
		case err != nil:
			return stamp, err
		case maps.Equal(cm.Data, want):
			return stamp, nil
		}
		cm.Data = want
		rep.Wrote()
		_, err = cms.Update(ctx, cm, client.UpdateOptions{})
		return stamp, err
	}
	return controller.NewBuilder(mgr, "applications").
		For(controller.Primary[*Application]()).
		Owns(controller.Owned[*ConfigMap]()).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			stamp, err := reconcile(ctx, req)
			rep.Reconciled("Application", req.Namespace+"/"+req.Name, stamp, err)
			return controller.Result{}, err
		}))
}
