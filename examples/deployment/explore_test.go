package deployment

import (
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// The Deployment controller under the explorer (docs/explore.md): created with 3
// replicas, scaled to 5, then to 1, then deleted (its finalizer); crashes between its
// writes, stale and coalesced views, API faults must leave the end state of an
// unperturbed run and begin no more Pod deletions. make test makes 6 perturbed runs.
func TestExploreDeployment(t *testing.T) {
	scale := func(n int) explore.Step {
		return explore.Update(DeploymentKind.Resource, "default", "web", "scale", func(o apitest.Object) {
			o["spec"].(map[string]any)["replicas"] = n
		})
	}
	explore.Run(t, explore.Config{
		Target: explore.Target{Setup: func(m *controller.Manager) error { _, err := Setup(m); return err },
			Env: controllertest.Options{CRDs: [][]byte{CRDYAML}}},
		Workload: explore.Workload{
			explore.Create(DeploymentKind.Resource, map[string]any{"apiVersion": DeploymentKind.APIVersion(), "kind": DeploymentKind.Kind,
				"metadata": map[string]any{"namespace": "default", "name": "web"},
				"spec": map[string]any{"replicas": 3, "template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}),
			explore.Settle(),
			scale(5),
			explore.Settle(),
			scale(1),
			explore.Settle(),
			explore.Delete(DeploymentKind.Resource, "default", "web"),
		},
		Runs: 6,
	})
}
