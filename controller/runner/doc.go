// Package runner runs named controllers on one controller.Manager the way
// kube-controller-manager runs its own: a list of Descriptors (name, InitFunc, the
// resources the controller needs, whether "*" includes it), an enable list in the
// --controllers syntax ("*", "name", "-name"; see ControllersVar), and a Runner that
//
//   - reads discovery once and hands every InitFunc a ControllerContext (shared informer
//     factory, client, event recorder, available resources);
//   - sets the enabled controllers up one after the other, in name order, with a jittered
//     pause between them, logging "Starting controller", "Started controller",
//     "Skipping controller" or "Controller is disabled" for each;
//   - skips a controller whose Descriptor.Resources are not served (the reason, "resource
//     <group/version/resource> is not served", goes to the log and to its /readyz entry)
//     rather than failing;
//   - starts the shared informers only after every InitFunc ran (Manager.Start), as
//     kube-controller-manager starts its informer factory after its initializers.
//
// For example:
//
//	r, err := runner.New(mgr, []runner.Descriptor{
//		{Name: "deployment", Init: startDeployment, Resources: []meta.GroupVersionResource{deploymentsGVR}},
//		{Name: "replicator", Init: startReplicator, DisabledByDefault: true},
//	}, runner.Options{Controllers: []string{"*", "replicator"}})
//	err = r.Run(ctx)
//
// Every enabled controller gets a /readyz entry "controller-<name>": failing until the
// informers its InitFunc created have synced (an informer another controller created first is
// covered by the Manager's "informers" entry), and for good when a resource it needs is not
// served.
//
// The pause spaces the InitFuncs, as kube-controller-manager spaces its initializers: what an
// InitFunc does at once (discovery, reads, its own goroutines) is spread out; the controllers
// it adds to the Manager start their workers once the shared caches have synced.
//
// Differences from kube-controller-manager: a controller whose InitFunc creates an informer
// of a resource that discovery does not list (a CustomResourceDefinition not installed) makes
// Run fail at once with a *NotServedError naming the controller and the resource, rather than
// the informer retrying its list until the cache sync times out; InitFuncs add their
// controllers to the Manager instead of starting goroutines, so the Manager's leader
// election, readiness and graceful shutdown cover them.
package runner
