// Package controller is the layer a controller author writes against: informerkit's
// rebuild of controller-runtime's reconcile, controller, source, handler, predicate, manager
// and metrics packages, on top of informerkit's informers and work queue.
//
//	mgr, _ := controller.NewManager(cfg, controller.ManagerOptions{LeaderElection: true, LeaderElectionID: "my-controller"})
//	pods := controller.InformerFor[*Pod](mgr, podsGVR)                       // a shared informer
//	c, _ := controller.New("pod-labeler", reconciler, controller.Options{MaxConcurrentReconciles: 4})
//	c.Watch(controller.Kind(pods, controller.EnqueueRequestForObject[*Pod](), controller.GenerationChanged[*Pod]()))
//	mgr.Add(c)
//	mgr.Start(ctx)
//
// Events from sources go through predicates to handlers, which add Requests (namespace and
// name) to the controller's work queue; workers take Requests and call
// Reconcile(ctx, Request) (Result, error). A Request is never reconciled by two workers at
// once. An error is retried with backoff, a TerminalError is not, Result.RequeueAfter
// requeues after a delay. The names are controller-runtime's; NewBuilder with Primary, Owned
// and Watched plays its builder (For, Owns, Watches). Handlers, predicates and sources are
// generic over the object type, bound to an informer in Kind.
//
// The Manager runs the informers, the controllers and leader election
// (controller/leaderelection), serves /healthz, /readyz and /metrics (controller/metrics),
// and hands reconcilers a Client (controller/client), an EventRecorderFor (controller/events)
// and the type registry (kinds). Unlike controller-runtime, initial-list events are queued at
// low priority, shutdown drains in-flight reconciles, /readyz fails on a stalled watch, and a
// controller may follow its CRDs (Options.FollowResources): wait, stop, start again.
//
// docs/controller.md has the details: every piece, the reconcile results and every
// difference from controller-runtime.
package controller
