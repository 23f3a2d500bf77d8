package informer

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every informer of the tests runs with the cache mutation detector (benchmarks without:
	// it deep-copies every cached object).
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Setenv(EnvCacheMutationDetector, "true")
	}
	goleak.VerifyTestMain(m)
}
