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
	)
}
