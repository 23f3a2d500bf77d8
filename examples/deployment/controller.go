package deployment

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/controller/expectations"
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
	recorder     controller.EventRecorder
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
	return setup(mgr, false, nil)
}

// setup wires the controller, sharded or not; wrap, if set, wraps the Reconciler (tests
// record the reconciles that run).
func setup(mgr *controller.Manager, sharded bool, wrap func(controller.Reconciler) controller.Reconciler) (*controller.Controller, error) {
	exp := expectations.NewUIDTracking[controller.Request](expectations.Options{})
	r := &Reconciler{
		children:     controller.OwnedWithOptions(controller.OwnedOptions[*Pod]{Expectations: exp}),
		expectations: exp,
		recorder:     mgr.EventRecorderFor(Name),
		mgr:          mgr,
	}
	var rec controller.Reconciler = r
	if wrap != nil {
		rec = wrap(r)
	}
	c, err := controller.NewBuilder(mgr, Name).
		For(controller.Primary[*MiniDeployment]()).
		Owns(r.children).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers, MaxRetries: MaxRetries, Logger: mgr.Logger(), Sharded: sharded,
			// Beyond what the builder declares: the finalizer is added with an update.
			Permissions: []controller.Rule{{Group: DeploymentGVR.Group, Resource: DeploymentGVR.Resource, Verbs: []string{"update"}}}}).
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
		if d, err = r.deployments.Update(ctx, d, client.UpdateOptions{}); err != nil {
			return controller.Result{}, err
		}
	}
	// Until the cache shows the Pods this controller created or deleted, counting them
	// would create or delete them twice; their events reconcile again.
	hash := templateHash(d.Spec.Template)
	if r.expectations.SatisfiedExpectations(req) {
		if err := r.apply(ctx, req, d, hash, planPods(d.DesiredReplicas(), hash, active)); err != nil {
			return controller.Result{}, err
		}
	}
	return controller.Result{}, r.updateStatus(ctx, d, hash, active)
}

// apply creates or deletes the Pods of one step (planPods), expecting their events first.
// A step does one or the other: expectations hold one kind at a time.
func (r *Reconciler) apply(ctx context.Context, req controller.Request, d *MiniDeployment, hash string, p plan) error {
	if p.create > 0 {
		r.expectations.ExpectCreations(req, p.create)
		for range p.create {
			if err := r.createPod(ctx, req, d, hash); err != nil {
				return err
			}
		}
		return nil
	}
	if len(p.victims) == 0 {
		return nil
	}
	uids := make([]string, len(p.victims))
	for i, v := range p.victims {
		uids[i] = v.UID
	}
	r.expectations.ExpectDeletions(req, uids)
	for _, v := range p.victims {
		if err := r.deletePod(ctx, req, d, v); err != nil {
			return err
		}
	}
	return nil
}

// createPod creates a Pod of the current template, controlled by d.
func (r *Reconciler) createPod(ctx context.Context, req controller.Request, d *MiniDeployment, hash string) error {
	pod := &Pod{ObjectMeta: meta.ObjectMeta{Namespace: d.Namespace, GenerateName: d.Name + "-",
		Labels: map[string]string{LabelOwner: d.Name, LabelTemplateHash: hash}}, Spec: d.Spec.Template.Spec}
	for k, v := range d.Spec.Template.Metadata.Labels {
		pod.Labels[k] = v
	}
	if err := controllerutil.SetControllerReferenceWithOptions(d, pod, controllerutil.OwnerReferenceOptions{Registry: r.mgr.Kinds()}); err != nil {
		return err
	}
	created, err := r.pods.Create(ctx, pod, client.CreateOptions{})
	if err != nil {
		r.expectations.CreationObserved(req) // no event will come for it
		r.recorder.Eventf(d, controller.EventTypeWarning, "FailedCreate", "Error creating pod: %v", err)
		return err
	}
	r.recorder.Eventf(d, controller.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.Name)
	return nil
}

func (r *Reconciler) deletePod(ctx context.Context, req controller.Request, d *MiniDeployment, p *Pod) error {
	err := r.pods.Delete(ctx, p, client.DeleteOptions{})
	switch {
	case meta.IsNotFound(err):
		// Gone already, as upstream's ReplicaSetController reasons: its delete event may
		// have been handled before ExpectDeletions (and lowered nothing), so it is counted
		// now. Counting a uid twice is harmless: UIDTracking counts each once.
		r.expectations.DeletionObserved(req, p.UID)
		return nil
	case err != nil:
		r.expectations.DeletionObserved(req, p.UID) // no event will come for it
		r.recorder.Eventf(d, controller.EventTypeWarning, "FailedDelete", "Error deleting pod %s: %v", p.Name, err)
		return err
	}
	r.recorder.Eventf(d, controller.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
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
	_, err := r.deployments.Update(ctx, d, client.UpdateOptions{})
	if meta.IsNotFound(err) {
		return nil
	}
	return err
}

// updateStatus writes the counts, observedGeneration and the Available and RolledOut
// conditions through the status subresource, if they changed.
func (r *Reconciler) updateStatus(ctx context.Context, d *MiniDeployment, hash string, active []*Pod) error {
	want, replicas := d.DesiredReplicas(), len(active)
	next := d.Status
	next.Replicas, next.ObservedGeneration = int32(replicas), d.Generation
	next.UpdatedReplicas, next.ReadyReplicas = 0, int32(countReady(active))
	for _, p := range active {
		if p.Labels[LabelTemplateHash] == hash {
			next.UpdatedReplicas++
		}
	}
	avail := conditions.Condition{Type: ConditionAvailable, Status: conditions.True, ObservedGeneration: d.Generation,
		Reason: "ReplicasReady", Message: fmt.Sprintf("%d of %d pods", replicas, want)}
	if replicas != want {
		avail.Status, avail.Reason = conditions.False, "Scaling"
	}
	rolled := conditions.Condition{Type: ConditionRolledOut, Status: conditions.True, ObservedGeneration: d.Generation,
		Reason: "PodsUpdatedAndReady", Message: fmt.Sprintf("%d of %d pods updated and ready", next.ReadyReplicas, want)}
	if int(next.UpdatedReplicas) != want || replicas != want || int(next.ReadyReplicas) != want {
		rolled.Status, rolled.Reason = conditions.False, "RollingOut"
		rolled.Message = fmt.Sprintf("%d of %d pods updated, %d ready", next.UpdatedReplicas, want, next.ReadyReplicas)
	}
	next.Conditions = slices.Clone(d.Status.Conditions)
	conditions.Set(&next.Conditions, avail)
	conditions.Set(&next.Conditions, rolled)
	if reflect.DeepEqual(next, d.Status) {
		return nil
	}
	if avail.Status == conditions.True && !conditions.IsTrue(d.Status.Conditions, ConditionAvailable) {
		r.recorder.Eventf(d, controller.EventTypeNormal, "Available", "%d pods", replicas)
	}
	if rolled.Status == conditions.True && !conditions.IsTrue(d.Status.Conditions, ConditionRolledOut) {
		r.recorder.Eventf(d, controller.EventTypeNormal, "RolledOut", "%d pods of template %s ready", replicas, hash)
	}
	d.Status = next
	_, err := r.deployments.Status().Update(ctx, d, client.UpdateOptions{})
	return err
}
