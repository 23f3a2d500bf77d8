package configmapreplicator

import (
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// The replicator under the explorer (docs/explore.md): copies made into the labelled
// namespaces, the source changed, the selector moved, the replication deleted; crashes
// between its writes, stale and coalesced views, API faults must leave the end state of an
// unperturbed run. make test makes 8 perturbed runs, make explore many more.
func TestExploreReplicator(t *testing.T) {
	var setup []explore.Step
	for _, ns := range []string{"src", "a", "b", "c"} {
		labels := map[string]any{"tier": ns}
		if ns == "a" || ns == "b" {
			labels[LabelReplicateInto] = "true"
		}
		setup = append(setup, explore.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns, "labels": labels}}))
	}
	workload := append(setup,
		explore.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "src", "name": "cfg"}, "data": map[string]any{"k": "v1"}}),
		explore.Create(ReplicationKind.Resource, replicationObj("r", map[string]any{LabelReplicateInto: "true"})),
		explore.Update("configmaps", "src", "cfg", "k=v2", func(o apitest.Object) { o["data"] = map[string]any{"k": "v2"} }),
		explore.Update(ReplicationKind.Resource, "", "r", "select tier c", func(o apitest.Object) {
			o["spec"].(map[string]any)["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"tier": "c"}}
		}),
		explore.Settle(),
		explore.Delete(ReplicationKind.Resource, "", "r"),
	)
	explore.Run(t, explore.Config{
		Target: explore.Target{Setup: func(m *controller.Manager) error {
			_, err := Setup(m, Options{})
			return err
		}, Env: controllertest.Options{CRDs: [][]byte{CRDYAML}}},
		Workload: workload,
		Cases:    []explore.Perturbation{staleRestartRecreatesCopies},
		Runs:     8,
	})
}

// The case the explorer found in this example (make explore, seed 268; fixed in fresh.go):
// killed after it deleted the copies for the moved selector, and restarted on a view from
// before the replication changed, the replicator saw the replication it had in the view,
// deleted on the server since, and re-created its copies in a and b, to delete them again
// once its view caught up.
var staleRestartRecreatesCopies = explore.Perturbation{
	explore.Crash{AfterWrite: 7, Lag: 3, LagWrites: 1},
	explore.Crash{AfterWrite: 5},
}
