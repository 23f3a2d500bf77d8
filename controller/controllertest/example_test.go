package controllertest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// A controller's test on the workbench, in a synctest bubble (compiled, not run: a test
// function takes its *testing.T from go test). examples/deployment's tests are full ones.
func Example() {
	_ = func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			env := controllertest.New(t, controllertest.Options{
				Server:  apitest.Options{InMemory: true},                    // fake clock for everything
				Nodes:   &apitest.NodesOptions{StartDelay: 2 * time.Second}, // Pods run and get Ready
				Timeout: 10 * time.Minute,                                   // waits on the fake clock
			})
			run := env.StartManager(controller.ManagerOptions{}, readiness) // your Setup
			createPod(env, "web", 30)
			controllertest.WaitFor(env, "pods", "default", "web", (*Pod).ready)
			env.WaitForEvent("default", "Pod", "web", "Ready")
			if st := run.Stats("readiness"); st.Dropped > 0 {
				t.Errorf("dropped requests: %+v", st)
			}
		})
	}
}
