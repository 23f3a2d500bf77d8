package widgets

import (
	"context"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/meta"
)

// Name is the controller's name: logs, metrics, events, its roles.
const Name = "widgets"

type reconciler struct {
	widgets  *client.Typed[*Widget]
	pods     *client.Typed[*Pod]
	children *controller.OwnedType[*Pod]
	events   controller.EventRecorder
}

// Setup adds the Widget controller to mgr.
func Setup(mgr *controller.Manager) error {
	r := &reconciler{
		widgets:  client.TypedFor[*Widget](mgr.Client()),
		pods:     client.TypedFor[*Pod](mgr.Client()),
		children: controller.Owned[*Pod](),
		events:   mgr.EventRecorderFor(Name),
	}
	return controller.NewBuilder(mgr, Name).
		For(controller.Primary[*Widget]()).
		Owns(r.children). // a change of its Pod reconciles the Widget
		WithOptions(controller.Options{MaxRetries: 15}).
		Complete(r)
}

func (r *reconciler) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	w, err := r.widgets.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
	if meta.IsNotFound(err) {
		return controller.Result{}, nil // gone: its Pod goes with it (owner reference)
	} else if err != nil {
		return controller.Result{}, err
	}
	pods, err := r.children.ChildrenOf(w)
	if err != nil {
		return controller.Result{}, err
	}
	ready := false
	switch {
	case len(pods) == 0:
		if err := r.createPod(ctx, w); err != nil {
			return controller.Result{}, err
		}
	case pods[0].Spec.Containers[0].Image != w.Spec.Image:
		// The image changed: replace the Pod (its delete event reconciles again). The
		// cache may be stale (a restart against a lagging server) and show the Pod this
		// replaced: deleting by name alone would delete the new one (the explorer found it,
		// explore_test.go), so only the Pod seen is deleted (its uid as a precondition).
		uid := pods[0].UID
		opts := client.DeleteOptions{Preconditions: &client.Preconditions{UID: &uid}}
		if err := r.pods.Delete(ctx, pods[0], opts); err != nil && !meta.IsNotFound(err) && !meta.IsConflict(err) {
			return controller.Result{}, err
		}
	default:
		for _, c := range pods[0].Status.Conditions {
			ready = ready || c.Type == "Ready" && c.Status == "True"
		}
	}
	cond := conditions.Condition{Type: "Ready", Status: conditions.False, Reason: "PodNotReady", ObservedGeneration: w.Generation}
	if ready {
		cond.Status, cond.Reason = conditions.True, "PodReady"
	}
	if conditions.Set(&w.Status.Conditions, cond) {
		if _, err := r.widgets.Status().Update(ctx, w, client.UpdateOptions{}); err != nil {
			return controller.Result{}, err // a 409 is retried, and counted, not logged as an error
		}
	}
	return controller.Result{}, nil
}

func (r *reconciler) createPod(ctx context.Context, w *Widget) error {
	pod := &Pod{ObjectMeta: meta.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}
	probe := &Probe{InitialDelaySeconds: w.Spec.ReadyAfterSeconds}
	probe.Exec.Command = []string{"true"}
	pod.Spec.Containers = []Container{{Name: "app", Image: w.Spec.Image, ReadinessProbe: probe}}
	if err := controllerutil.SetControllerReference(w, pod); err != nil {
		return err
	}
	_, err := r.pods.Create(ctx, pod, client.CreateOptions{})
	if meta.IsAlreadyExists(err) {
		return nil // the old one is still terminating: its delete event comes
	}
	if err == nil {
		r.events.Eventf(w, controller.EventTypeNormal, "PodCreated", "Created pod %s running %s", pod.Name, w.Spec.Image)
	}
	return err
}
