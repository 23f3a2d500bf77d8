package nodepool

import (
	"context"
	"slices"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/meta"
)

// Name is the controller's name: its logs, metrics, Events, Lease and roles.
const Name = "nodepool"

// Setup adds the NodePool controller to mgr: a pool is reconciled when it changes, when
// one of its Nodes changes, and when a Pod on one of its Nodes does.
func Setup(mgr *controller.Manager) error {
	r := &reconciler{
		pools:  client.TypedFor[*NodePool](mgr.Client()),
		nodes:  client.TypedFor[*Node](mgr.Client()),
		pods:   client.TypedFor[*Pod](mgr.Client()),
		events: mgr.EventRecorderFor(Name),
	}
	return controller.NewBuilder(mgr, Name).
		For(controller.Primary[*NodePool](controller.GenerationChanged[*NodePool]())).
		Watches(controller.Watched(controller.EnqueueRequestsFromMapFunc(r.poolsOfNode))).
		Watches(controller.Watched(controller.EnqueueRequestsFromMapFunc(r.poolsOfPod))).
		WithOptions(controller.Options{Permissions: permissions}).
		Complete(r)
}

type reconciler struct {
	pools  *client.Typed[*NodePool]
	nodes  *client.Typed[*Node]
	pods   *client.Typed[*Pod]
	events controller.EventRecorder
}

// poolsOfNode maps a Node to the pools whose selector picks it.
func (r *reconciler) poolsOfNode(ctx context.Context, n *Node) []controller.Request {
	pools, err := r.pools.List(ctx, client.ListOptions{})
	if err != nil {
		return nil
	}
	var out []controller.Request
	for _, p := range pools {
		if p.Spec.Selector.Matches(n.Labels) {
			out = append(out, controller.RequestFor(p))
		}
	}
	return out
}

// poolsOfPod maps a Pod to the pools of its Node: a drained Pod lets a drain finish.
func (r *reconciler) poolsOfPod(ctx context.Context, p *Pod) []controller.Request {
	n, err := r.nodes.Get(ctx, "", p.Spec.NodeName, client.GetOptions{UnsafeDisableDeepCopy: true})
	if p.Spec.NodeName == "" || err != nil {
		return nil
	}
	return r.poolsOfNode(ctx, n)
}

// Reconcile keeps the pool's labels and taints on its Nodes, drains the Nodes NotReady past
// the grace period (MaxUnavailable at a time), writes the status, and asks to be called
// again when the next NotReady Node passes its grace period.
func (r *reconciler) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	pool, err := r.pools.Get(ctx, "", req.Name, client.GetOptions{})
	if meta.IsNotFound(err) {
		return controller.Result{}, nil
	} else if err != nil {
		return controller.Result{}, err
	}
	if err := pool.Spec.Selector.Validate("spec.selector"); err != nil {
		r.events.Eventf(pool, controller.EventTypeWarning, "InvalidSelector", "%v", err)
		return controller.Result{}, nil // a new spec reconciles again
	}
	sel, _ := pool.Spec.Selector.AsSelector()
	nodes, err := r.nodes.List(ctx, client.ListOptions{LabelSelector: sel})
	if err != nil {
		return controller.Result{}, err
	}
	slices.SortFunc(nodes, func(a, b *Node) int { return notReadySince(a).Compare(notReadySince(b)) })
	status := NodePoolStatus{Nodes: int32(len(nodes)), ObservedGeneration: pool.Generation}
	budget, err := pool.Spec.MaxUnavailable.ScaledValue(len(nodes), false)
	if err != nil {
		r.events.Eventf(pool, controller.EventTypeWarning, "InvalidMaxUnavailable", "spec.maxUnavailable: %v", err)
		return controller.Result{}, nil
	}
	budget = max(budget, 1)
	var next time.Duration // until the next drain is due, or a Pod's grace period ends
	for _, n := range nodes {
		if err := r.configure(ctx, pool, n); err != nil {
			return controller.Result{}, err
		}
		since := notReadySince(n)
		if since.IsZero() {
			status.Ready++
			continue
		}
		due := time.Until(since.Add(pool.Spec.DrainGracePeriod.Duration))
		switch {
		case due > 0:
			next = soonest(next, due)
			continue
		case len(status.Draining) >= budget:
			status.Waiting = append(status.Waiting, n.Name)
			continue
		}
		left, wait, err := r.drain(ctx, pool, n)
		if err != nil {
			return controller.Result{}, err
		}
		if left > 0 {
			status.Draining = append(status.Draining, n.Name)
			next = soonest(next, wait)
		}
	}
	if err := r.writeStatus(ctx, pool, status); err != nil {
		return controller.Result{}, err
	}
	return controller.Result{RequeueAfter: next}, nil
}

// configure sets the pool's labels and taints on n, with a patch that fails if the Node
// changed since it was read (it is then reconciled again).
func (r *reconciler) configure(ctx context.Context, pool *NodePool, n *Node) error {
	want := client.DeepCopy(n)
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	for k, v := range pool.Spec.Labels {
		want.Labels[k] = v
	}
	for _, t := range pool.Spec.Taints {
		i := slices.IndexFunc(want.Spec.Taints, func(o Taint) bool { return o.Key == t.Key && o.Effect == t.Effect })
		if i < 0 {
			want.Spec.Taints = append(want.Spec.Taints, t)
		} else {
			want.Spec.Taints[i] = t
		}
	}
	written, err := r.nodes.PatchFrom(ctx, client.MergePatchType, n, want, client.PatchFromOptions{OptimisticLock: true})
	if err == nil && written != n {
		r.events.Eventf(pool, controller.EventTypeNormal, "NodeConfigured", "set the pool's labels and taints on %s", n.Name)
	}
	return err
}

// drain deletes the Pods of the NotReady Node n: first with their grace period, then, since
// no kubelet confirms the stop of a Pod on a Node that does not report, at once when that
// period is over. It returns the Pods left and when the next one's grace period ends.
func (r *reconciler) drain(ctx context.Context, pool *NodePool, n *Node) (left int, wait time.Duration, err error) {
	pods, err := r.pods.List(ctx, client.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	now := time.Now()
	for _, p := range pods {
		if p.Spec.NodeName != n.Name || p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue
		}
		left++
		switch {
		case p.DeletionTimestamp == nil:
			if err := r.pods.Delete(ctx, p, client.DeleteOptions{}); err != nil && !meta.IsNotFound(err) {
				return 0, 0, err
			}
			// Its update (a deletion deadline) reconciles the pool again.
			r.events.Eventf(pool, controller.EventTypeNormal, "Draining", "deleting %s/%s of %s, NotReady since %s",
				p.Namespace, p.Name, n.Name, notReadySince(n).Format(time.RFC3339))
		case now.Before(p.DeletionTimestamp.Time):
			wait = soonest(wait, p.DeletionTimestamp.Sub(now))
		default:
			zero := int64(0)
			if err := r.pods.Delete(ctx, p, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !meta.IsNotFound(err) {
				return 0, 0, err
			}
			left--
		}
	}
	if left == 0 {
		r.events.Eventf(pool, controller.EventTypeNormal, "Drained", "%s has no Pods left", n.Name)
	}
	return left, wait, nil
}

// writeStatus patches the pool's status when it changed.
func (r *reconciler) writeStatus(ctx context.Context, pool *NodePool, status NodePoolStatus) error {
	want := client.DeepCopy(pool)
	want.Status = status
	_, err := r.pools.Status().PatchFrom(ctx, client.MergePatchType, pool, want, client.PatchFromOptions{})
	return err
}

// notReadySince is when n's Ready condition last stopped being True (zero if it is True).
func notReadySince(n *Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			if c.Status == "True" {
				return time.Time{}
			}
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{} // no condition yet: a Node that has not reported is not drained
}

// soonest is the earlier of two waits, 0 meaning none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// permissions are what the reconciler writes beyond what the Builder derives from For and
// Watches (reads of all three kinds, the pool's status): it patches Nodes and deletes Pods.
var permissions = []controller.Rule{
	{Resource: "nodes", Verbs: []string{"patch"}},
	{Resource: "pods", Verbs: []string{"delete"}},
}
