package deployment

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/expectations"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/meta"
)

// Name is the controller's name: in the runner's --controllers list, logs, metrics and as
// the source of its events.
const Name = "minideployment"

// Workers is the number of reconciles that run at once (kube-controller-manager's
// --concurrent-deployment-syncs, whose default is 5).
const Workers = 4

// MaxRetries is how many times a failing MiniDeployment is retried before it is dropped
// until its next event, as the seed's maxRetries.
const MaxRetries = 15

// Reconciler keeps each MiniDeployment's Pods at its replica count.
type Reconciler struct {
	deployments  *client.Typed[*MiniDeployment]
	pods         *client.Typed[*Pod]
	children     *controller.OwnedType[*Pod]
	expectations *expectations.UIDTracking[controller.Request]
	recorder     events.EventRecorder
	mgr          *controller.Manager
}

// Descriptor is the controller for runner's Runner: it needs the MiniDeployment
// resource (the CRD installed) and is on by default.
func Descriptor() runner.Descriptor {
	return runner.Descriptor{Name: Name, Resources: []meta.GroupVersionResource{DeploymentGVR},
		Init: func(_ context.Context, cc runner.ControllerContext) (bool, error) {
			_, err := Setup(cc.Manager)
			return err == nil, err
		}}
}

// Setup wires the controller on mgr: MiniDeployments are its primary type; Pods it controls
// enqueue their MiniDeployment and lower its expectations.
func Setup(mgr *controller.Manager) (*controller.Controller, error) {
	return setup(mgr, nil)
}

// setup wires the controller; wrap, if set, wraps the Reconciler (SetupSharded gates it).
func setup(mgr *controller.Manager, wrap func(controller.Reconciler) controller.Reconciler) (*controller.Controller, error) {
	exp := expectations.NewUIDTracking[controller.Request](expectations.Options{})
	r := &Reconciler{
		children:     controller.OwnedWithOptions(PodGVR, controller.OwnedOptions[*Pod]{Expectations: exp}),
		expectations: exp,
		recorder:     mgr.EventRecorderFor(Name),
		mgr:          mgr,
	}
	var rec controller.Reconciler = r
	if wrap != nil {
		rec = wrap(r)
	}
	c, err := controller.NewBuilder(mgr, Name).
		For(controller.Primary[*MiniDeployment](DeploymentGVR)).
		Owns(r.children).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers, MaxRetries: MaxRetries, Logger: mgr.Logger(),
			// Beyond what the builder declares: the finalizer is added with an update.
			Permissions: []rbac.Rule{{Group: DeploymentGVR.Group, Resource: DeploymentGVR.Resource, Verbs: []string{"update"}}}}).
		Build(rec)
	if err != nil {
		return nil, err
	}
	r.deployments = client.TypedFor[*MiniDeployment](mgr.Client())
	r.pods = client.TypedFor[*Pod](mgr.Client())
	return c, nil
}

// Reconcile brings one MiniDeployment's Pods to its replica count (the seed's
// syncDeployment), then writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	d, err := r.deployments.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
	if meta.IsNotFound(err) {
		r.expectations.DeleteExpectations(req)
		return controller.Result{}, nil
	} else if err != nil {
		return controller.Result{}, err
	}
	pods, err := r.children.ChildrenOf(d)
	if err != nil {
		return controller.Result{}, err
	}
	active := slices.DeleteFunc(pods, func(p *Pod) bool { return p.DeletionTimestamp != nil })

	if d.DeletionTimestamp != nil {
		return controller.Result{}, r.finalize(ctx, req, d, active)
	}
	if controllerutil.AddFinalizer(d, Finalizer) {
		if d, err = r.deployments.Update(ctx, d, apiclient.UpdateOptions{}); err != nil {
			return controller.Result{}, err
		}
	}
	// Until the cache shows the Pods this controller created or deleted, counting them
	// would create or delete them twice; their events reconcile again.
	if r.expectations.SatisfiedExpectations(req) {
		if err := r.scale(ctx, req, d, active); err != nil {
			return controller.Result{}, err
		}
	}
	return controller.Result{}, r.updateStatus(ctx, d, len(active))
}

// scale creates or deletes Pods, expecting their events first.
func (r *Reconciler) scale(ctx context.Context, req controller.Request, d *MiniDeployment, active []*Pod) error {
	diff := d.DesiredReplicas() - len(active)
	switch {
	case diff > 0:
		r.expectations.ExpectCreations(req, diff)
		for range diff {
			pod := &Pod{ObjectMeta: meta.ObjectMeta{Namespace: d.Namespace, GenerateName: d.Name + "-",
				Labels: map[string]string{LabelOwner: d.Name}}, Spec: d.Spec.Template.Spec}
			for k, v := range d.Spec.Template.Metadata.Labels {
				pod.Labels[k] = v
			}
			if err := controllerutil.SetControllerReferenceWithOptions(d, pod, controllerutil.OwnerReferenceOptions{Registry: r.mgr.Kinds()}); err != nil {
				return err
			}
			created, err := r.pods.Create(ctx, pod, apiclient.CreateOptions{})
			if err != nil {
				r.expectations.CreationObserved(req) // no event will come for it
				r.recorder.Eventf(d, events.Warning, "FailedCreate", "Error creating pod: %v", err)
				return err
			}
			r.recorder.Eventf(d, events.Normal, "SuccessfulCreate", "Created pod: %s", created.Name)
		}
	case diff < 0:
		// The newest Pods go first.
		slices.SortFunc(active, func(a, b *Pod) int {
			return cmp.Or(b.CreationTimestamp.Compare(a.CreationTimestamp.Time), cmp.Compare(b.Name, a.Name))
		})
		victims := active[:-diff]
		uids := make([]string, len(victims))
		for i, p := range victims {
			uids[i] = p.UID
		}
		r.expectations.ExpectDeletions(req, uids)
		for _, p := range victims {
			if err := r.deletePod(ctx, req, d, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Reconciler) deletePod(ctx context.Context, req controller.Request, d *MiniDeployment, p *Pod) error {
	err := r.pods.Delete(ctx, p, apiclient.DeleteOptions{})
	switch {
	case meta.IsNotFound(err):
		// Gone already, as upstream's ReplicaSetController reasons: its delete event may
		// have been handled before ExpectDeletions (and lowered nothing), so it is counted
		// now. Counting a uid twice is harmless: UIDTracking counts each once.
		r.expectations.DeletionObserved(req, p.UID)
		return nil
	case err != nil:
		r.expectations.DeletionObserved(req, p.UID) // no event will come for it
		r.recorder.Eventf(d, events.Warning, "FailedDelete", "Error deleting pod %s: %v", p.Name, err)
		return err
	}
	r.recorder.Eventf(d, events.Normal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
	return nil
}

// finalize deletes the Pods of a MiniDeployment being deleted, then lets it go.
func (r *Reconciler) finalize(ctx context.Context, req controller.Request, d *MiniDeployment, active []*Pod) error {
	if !controllerutil.ContainsFinalizer(d, Finalizer) {
		return nil
	}
	if len(active) > 0 {
		for _, p := range active {
			if err := r.deletePod(ctx, req, d, p); err != nil {
				return err
			}
		}
		return nil // the Pods' delete events reconcile again
	}
	if pods, err := r.children.ChildrenOf(d); err != nil || len(pods) > 0 {
		return err // Pods still terminating
	}
	controllerutil.RemoveFinalizer(d, Finalizer)
	_, err := r.deployments.Update(ctx, d, apiclient.UpdateOptions{})
	if meta.IsNotFound(err) {
		return nil
	}
	return err
}

// updateStatus writes replicas, observedGeneration and the Available condition through the
// status subresource, if they changed.
func (r *Reconciler) updateStatus(ctx context.Context, d *MiniDeployment, replicas int) error {
	want := d.DesiredReplicas()
	next := d.Status
	next.Replicas, next.ObservedGeneration = int32(replicas), d.Generation
	cond := conditions.Condition{Type: ConditionAvailable, Status: conditions.True, ObservedGeneration: d.Generation,
		Reason: "ReplicasReady", Message: fmt.Sprintf("%d of %d pods", replicas, want)}
	if replicas != want {
		cond.Status, cond.Reason = conditions.False, "Scaling"
	}
	next.Conditions = slices.Clone(d.Status.Conditions)
	conditions.Set(&next.Conditions, cond)
	if reflect.DeepEqual(next, d.Status) {
		return nil
	}
	if cond.Status == conditions.True && !conditions.IsTrue(d.Status.Conditions, ConditionAvailable) {
		r.recorder.Eventf(d, events.Normal, "Available", "%d pods", replicas)
	}
	d.Status = next
	_, err := r.deployments.Status().Update(ctx, d, apiclient.UpdateOptions{})
	return err
}
