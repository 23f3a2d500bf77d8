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
//   - skips a controller whose Descriptor.Resources are not served (the reason goes to the
//     log and to its /readyz entry) rather than failing;
//   - starts the shared informers only after every InitFunc ran (Manager.Start).
//
// For example:
//
//	r, err := runner.New(mgr, []runner.Descriptor{
//		{Name: "deployment", Init: startDeployment, Resources: []meta.GroupVersionResource{deploymentsGVR}},
//		{Name: "replicator", Init: startReplicator, DisabledByDefault: true},
//	}, runner.Options{Controllers: []string{"*", "replicator"}})
//	err = r.Run(ctx)
//
// Every enabled controller gets a /readyz entry "controller-<name>", failing until the
// informers its InitFunc created have synced, and for good when a resource it needs is not
// served. Unlike kube-controller-manager, an InitFunc that creates an informer of a
// resource discovery does not list makes Run fail at once (*NotServedError), and InitFuncs
// add their controllers to the Manager, whose leader election, readiness and graceful
// shutdown then cover them. docs/runner.md has the details.
package runner
