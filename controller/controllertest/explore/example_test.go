package explore_test

import (
	"fmt"

	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// A report's perturbation, read back as -explore.replay does: a crash right after the
// controller's third write, restarted on a view one change behind, and the events of
// Pods coalesced from the fifth delivery on.
func ExampleParsePerturbation() {
	p, err := explore.ParsePerturbation("crash(after-write=3,lag=1,lag-writes=1) + coalesce(resource=pods,from-delivery=5,events=3,merged)")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range p {
		fmt.Printf("%s: %s\n", a.Kind(), a)
	}
	// Output:
	// stale: crash(after-write=3,lag=1,lag-writes=1)
	// unobserved: coalesce(resource=pods,from-delivery=5,events=3,merged)
}
