package bench

import (
	"testing"

	// Imported here so that go.mod pins the client-go packages every comparison uses.
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/util/workqueue"
)

// TestMain exists so that the package has a test binary even before any benchmark file does.
func TestMain(m *testing.M) { m.Run() }
