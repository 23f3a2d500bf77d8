package multicluster_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/informer"
)

// Every informer of the tests runs with the cache mutation detector.
func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}
