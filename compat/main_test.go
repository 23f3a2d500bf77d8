package compat

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopRealCluster()
	if code == 0 {
		if err := goleak.Find(
			// controller-runtime's metadata-only informers wrap their watch in
			// apimachinery's watch.Filter (newGVKFixupWatcher), whose goroutine blocks for ever
			// on a send when an event arrives after the reflector stopped reading: theirs, not
			// apitest's.
			goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
		); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
