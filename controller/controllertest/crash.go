package controllertest

import (
	"github.com/informerkit/informerkit/apitest"
)

// Crash kills the Manager as a killed process dies, not as a graceful Stop: the server
// drops every later request of its client (Running.Client) and aborts its watches, and
// its Start's context is cancelled without waiting for anything. A reconcile in progress
// is abandoned (its writes are refused) instead of being drained. Start a new Manager on
// the Env for the restarted process: it is a new client, with empty caches. Crash returns
// at once; the test's cleanup still waits for the dead Manager's goroutines to end (and
// ignores what its Start returns).
func (r *Running) Crash() {
	r.crashOnce.Do(func() {
		r.e.Server.Clients().Kill(r.Client)
		close(r.crashed)
		r.cancel()
	})
}

// CrashAfterWrites makes the Manager crash (Crash) right after its n-th write from now,
// counting the creates, updates, patches and deletes its controllers make (not Events,
// Leases nor access reviews): that write is committed, its answer never arrives, and
// nothing the process does after it reaches the server.
func (r *Running) CrashAfterWrites(n int) {
	count := 0
	r.e.Server.Clients().OnWrite(r.Client, func(w apitest.Write) apitest.WriteAction {
		if !ControllerWrite(w) {
			return apitest.WriteProceed
		}
		if count++; count == n {
			go r.Crash() // the hook must not block; the server already refuses the rest
			return apitest.WriteKillAfter
		}
		return apitest.WriteProceed
	})
}

// Crashed returns a channel closed once the Manager has crashed (Crash, CrashAfterWrites).
func (r *Running) Crashed() <-chan struct{} { return r.crashed }

// IsCrashed reports whether the Manager has crashed.
func (r *Running) IsCrashed() bool {
	select {
	case <-r.crashed:
		return true
	default:
		return false
	}
}

// ControllerWrite reports whether w is a write of a controller's own (what
// CrashAfterWrites counts): not an Event, a Lease (leader election) or an access review
// (the Manager's permission check).
func ControllerWrite(w apitest.Write) bool {
	switch w.Resource {
	case "events", "events.events.k8s.io", "leases.coordination.k8s.io",
		"selfsubjectaccessreviews.authorization.k8s.io", "subjectaccessreviews.authorization.k8s.io",
		"selfsubjectrulesreviews.authorization.k8s.io", "tokenreviews.authentication.k8s.io":
		return false
	}
	return true
}
