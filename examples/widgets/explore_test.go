package widgets

import (
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// The Widget controller under the explorer (docs/explore.md): a Widget created, its Pod
// Ready on a simulated node, then a new image; crashes between its writes, stale and
// coalesced views, API faults must leave the same end state as an unperturbed run. make
// test makes 8 perturbed runs, make explore many more (-explore.runs).
func TestExploreWidget(t *testing.T) {
	explore.Run(t, explore.Config{
		Target: explore.Target{Setup: Setup, Env: controllertest.Options{
			CRDs:  [][]byte{CRD},
			Nodes: &apitest.NodesOptions{StartDelay: 2 * time.Second},
		}},
		Workload: explore.Workload{
			explore.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "default", "name": "w"},
				"spec":     map[string]any{"image": "app:1", "readyAfterSeconds": 30}}),
			explore.Settle(),
			explore.Update("widgets", "default", "w", "image app:2", func(o apitest.Object) {
				o["spec"].(map[string]any)["image"] = "app:2"
			}),
			explore.Settle(),
		},
		Cases: []explore.Perturbation{staleRestartDeletesNewPod},
		Runs:  8,
	})
}

// The case the explorer found in this example (fixed in controller.go): restarted against
// a server whose watch cache lagged four changes behind, the controller saw the Pod it had
// replaced, terminating, and deleted the new one by name.
var staleRestartDeletesNewPod = explore.Perturbation{explore.Crash{AfterWrite: 8, Lag: 4, LagWrites: 1}}
