// Package controller is the layer a controller author writes against: informerkit's
// rebuild of controller-runtime's reconcile, controller, source, handler, predicate, manager
// and metrics packages, on top of informerkit's informers and work queue.
//
// A kind is stated once, where its Go type is registered (kinds.MustRegister[*Pod](kinds.Pod),
// kinds.MustFromCRD for your own); everything else resolves it from the Manager's registry:
//
//	mgr, _ := controller.NewManager(cfg, controller.ManagerOptions{LeaderElection: true, LeaderElectionID: "pools"})
//	err := controller.NewBuilder(mgr, "pools").
//		For(controller.Primary[*NodePool](controller.GenerationChanged[*NodePool]())).
//		Owns(controller.Owned[*Pod]()).
//		Watches(controller.Watched(controller.EnqueueRequestsFromMapFunc(poolsOfNode))).
//		Complete(reconciler)
//	mgr.Start(ctx)
//
// The Builder watches each type with the Manager's shared informer of it; InformerFor
// returns that informer (the one way to get one), and Kind is the source over it for a
// controller made with New. Events go through predicates to handlers, which add Requests
// (namespace and name) to the controller's work queue; workers call Reconcile(ctx, Request)
// (Result, error), never two at once for one Request. An error is retried with backoff, a
// TerminalError is not, Result.RequeueAfter requeues after a delay.
//
// The Manager runs the informers, the controllers and leader election, serves /healthz,
// /readyz and /metrics, and hands reconcilers a Client (controller/client: reads from the
// caches that see their own writes, writes, patches, every option type a reconciler
// passes) and an EventRecorder. Unlike controller-runtime, initial-list events are queued
// at low priority, shutdown drains in-flight reconciles, /readyz fails on a stalled watch,
// a controller may follow its CRDs (Options.FollowResources), and a reconcile knows its
// causes (TriggersFrom, docs/triggers.md). docs/controller.md has every difference.
package controller
