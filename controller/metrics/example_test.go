package metrics_test

import (
	"os"

	"github.com/informerkit/informerkit/controller/metrics"
)

// Register a labelled counter and write the registry as /metrics would.
func ExampleRegistry() {
	reg := metrics.NewRegistry()
	jobs := reg.NewCounter("jobs_total", "Jobs done.", "kind")
	jobs.With("backup").Inc()
	jobs.With("backup").Add(2)
	_ = reg.WriteText(os.Stdout)
	// Output:
	// # HELP jobs_total Jobs done.
	// # TYPE jobs_total counter
	// jobs_total{kind="backup"} 3
}
