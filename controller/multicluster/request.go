package multicluster

import (
	"context"

	"github.com/informerkit/informerkit/controller"
)

// Request names the object a reconcile is about and the cluster it lives in. It is
// comparable: the controller's work queue deduplicates it, and one Request is never
// reconciled by two workers at once. The same namespace and name in two clusters are two
// Requests.
type Request struct {
	// Cluster is the name the Provider gave the cluster.
	Cluster string
	controller.Request
}

// String returns "cluster:namespace/name" (or "cluster:name" for a cluster-scoped object).
func (r Request) String() string { return r.Cluster + ":" + r.Request.String() }

// Reconciler reconciles one object of one cluster. cl is the engaged cluster req names: its
// Client reads from that cluster's caches and writes to its API server. ctx is cancelled
// when the cluster is disengaged (it left the fleet, or this replica no longer holds it), on
// top of the controller's own deadlines. Everything else is as controller.Reconciler:
// level-triggered, idempotent, an error retried with backoff (this cluster's), a
// controller.TerminalError not retried.
type Reconciler interface {
	Reconcile(ctx context.Context, cl *Cluster, req Request) (controller.Result, error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, cl *Cluster, req Request) (controller.Result, error)

// Reconcile calls f(ctx, cl, req).
func (f ReconcilerFunc) Reconcile(ctx context.Context, cl *Cluster, req Request) (controller.Result, error) {
	return f(ctx, cl, req)
}
