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
// once, and many events for one object while it waits collapse into one reconcile.
//
// The names are controller-runtime's (Request, Result, Reconciler, TerminalError, Kind,
// Channel, EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc,
// GenerationChanged, And/Or/Not, Runnable, LeaderElectionRunnable, ...); NewManager plays
// manager.New and New(name, reconciler, Options) + Manager.Add plays controller.New;
// NewBuilder with Primary, Owned and Watched plays controller-runtime's builder (For, Owns,
// Watches), and OwnedType.ChildrenOf lists an owner's children from an index. The
// Manager serves /healthz, /readyz and /metrics (package controller/metrics) on
// ManagerOptions.HTTPAddress; leader election is package controller/leaderelection.
//
// The Manager also hands reconcilers what they need besides the informers: Client (package
// client: cache reads that see the client's own writes, writes to the API server),
// EventRecorderFor (package controller/events) and the type registry (Kinds, package kinds);
// package controller/controllerutil has the finalizer, owner-reference and CreateOrUpdate
// helpers.
//
// Handlers, predicates and sources are generic over the object type, so a handler for Pods
// cannot be attached to an informer of ConfigMaps; the binding happens in Kind, where the
// type is known, and the Controller itself has no type parameter.
//
// # Reconcile results
//
//   - error (or a panic, recovered and counted): AddRateLimited, exponential backoff per
//     Request; past Options.MaxRetries retries the Request is forgotten, logged and counted;
//     a 409 Conflict is retried the same way but logged at debug level (Stats, metric);
//   - TerminalError: logged and counted, not retried;
//   - Result.RequeueAfter > 0: Forget, then AddAfter(d);
//   - Result.Requeue: AddRateLimited;
//   - success: Forget (the Request's backoff starts again from the base delay).
//
// # Where it differs from controller-runtime
//
//   - Initial-list events are queued at low priority: a controller starting over many
//     existing objects still reacts first to what changes now.
//   - Shutdown drains: in-flight reconciles finish with a live context (up to the drain
//     timeout) instead of having their writes cut. After a lost Lease they are cancelled at
//     once instead, with cause ErrLeaderElectionLost.
//   - Leader election keeps renewing while the leader's runnables drain, and releases only
//     after they have stopped (see package leaderelection).
//   - /readyz fails when an informer has gone without news longer than MaxStaleness (a
//     stalled watch), not only before the first sync.
//   - Queue metrics of stopped controllers are removed from /metrics.
package controller
