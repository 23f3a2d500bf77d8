package compat

import (
	"testing"

	"go.uber.org/goleak"
)

// runThenStopCluster runs the tests, then stops the real cluster if a test started one, so
// that goleak looks for leaked goroutines after the cluster's clients are gone.
type runThenStopCluster struct{ m *testing.M }

func (r runThenStopCluster) Run() int {
	code := r.m.Run()
	stopRealCluster()
	return code
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(runThenStopCluster{m},
		// controller-runtime's metadata-only informers wrap their watch in
		// apimachinery's watch.Filter (newGVKFixupWatcher), whose goroutine blocks for ever
		// on a send when an event arrives after the reflector stopped reading: theirs, not
		// apitest's.
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
		// controller-runtime v0.24's priority queue (its default work queue) can leave the
		// goroutine that hands ready items out blocked on its send to Get after ShutDown,
		// when no worker reads any more: theirs too (seen once in a CI rehearsal).
		goleak.IgnoreTopFunction("sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).handleReadyItems.func1.1"),
	)
}
