// Package controllertest is the workbench of a controller's tests on apitest, the harness
// every controller's tests otherwise copy: an in-process API server with the controller's
// CRDs and, if asked, simulated nodes (New); a Manager or a controller-manager Runner
// started in one call and stopped when the test ends (StartManager, StartRunner); and what a
// test asks while it runs: wait until an object reaches a state (WaitFor), the Events of an
// object, the holder of a Lease, a controller's reconcile, requeue and drop counts
// (Running.Stats, without scraping /metrics).
//
//	env := controllertest.New(t, controllertest.Options{CRDs: [][]byte{widgets.CRDYAML}})
//	run := env.StartManager(controller.ManagerOptions{}, widgets.Setup)
//	env.Create("widgets", widget)
//	w := controllertest.WaitFor(env, "widgets", "default", "w", func(w *widgets.Widget) bool {
//		return conditions.IsTrue(w.Status.Conditions, "Ready")
//	})
//	env.WaitForEvent("default", "Widget", "w", "Created")
//	if st := run.Stats("widgets"); st.Dropped > 0 { ... }
//
// With Options.Server.InMemory, everything runs inside a testing/synctest bubble: waits,
// readiness delays of simulated nodes, requeues and leases run on the fake clock. Every
// wait is bounded by Options.Timeout and fails the test with what it last saw.
package controllertest
