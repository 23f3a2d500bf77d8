package controller

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/informer"
)

// Every informer of the tests runs with the cache mutation detector: a reconciler or handler
// that changes a cached object fails the tests.
func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}
