// Package explore finds a controller's bugs before its users do, as Sieve and Acto do on
// clusters, in-process and deterministically: it runs a workload (creates, updates,
// deletes, node failures, waits) against the controller on apitest inside a
// testing/synctest bubble, once as a reference, then again under perturbations of what the
// controller sees, each drawn from a seed:
//
//   - intermediate state: the process dies right after its k-th write and restarts with
//     empty caches (or a standby takes over);
//   - stale state: it restarts against a view that lags the server, or one informer lags
//     the others until the controller has written;
//   - unobserved state: events coalesced (only the latest state of each object) or
//     replaced by a relist;
//   - API faults: a write answered 409, 500, 504, or committed and its answer lost;
//     watches cut or expired.
//
// Every event reaches the controller one at a time, once everything has settled, so a run
// depends on its perturbation only. The oracles: invariants after every change the server
// commits, the end state and the deletions compared with the reference run's (normalised),
// liveness, no goroutine left. A failure is shrunk, replayed, and reported with the
// command that replays it and the trace of what the controller saw beside what the server
// held at each of its writes:
//
//	explore.Run(t, explore.Config{
//		Target:   explore.Target{Setup: widgets.Setup, Env: controllertest.Options{CRDs: crds}},
//		Workload: explore.Workload{explore.Create("widgets", w), explore.Settle()},
//	})
//
// docs/explore.md explains the three kinds of bugs, workloads, invariants and replays.
package explore
