package client

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/informer"
)

func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}
