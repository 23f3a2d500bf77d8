package nodepool

import (
	"fmt"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
)

// The NodePool controller under the explorer (docs/explore.md), with a standby replica
// that takes over when the leader dies: the pool configures its two Nodes, both go
// NotReady and are drained one at a time. Beside the end state, an invariant after every
// change the server commits: never more Nodes draining than maxUnavailable (50% of 2).
// make test makes 2 perturbed runs (under -race, of the configuration only), make explore
// many more (-explore.runs).
func TestExploreNodePool(t *testing.T) {
	workload := explore.Workload{
		explore.Do("label node-1 and node-2 pool=gpu", func(env *controllertest.Env) error {
			for _, n := range []string{"node-1", "node-2"} {
				if _, err := env.Server.Mutate("nodes", "", n, func(o apitest.Object) {
					md := o["metadata"].(map[string]any)
					labels, _ := md["labels"].(map[string]any)
					if labels == nil {
						labels = map[string]any{}
					}
					labels["pool"] = "gpu"
					md["labels"] = labels
				}); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	for i, node := range []string{"node-1", "node-1", "node-2", "node-3"} {
		workload = append(workload, explore.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("p-%d", i)},
			"spec": map[string]any{"nodeName": node, "terminationGracePeriodSeconds": 30,
				"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}}))
	}
	workload = append(workload,
		explore.Create("nodepools", gpuPool(map[string]any{
			"selector":         map[string]any{"matchLabels": map[string]any{"pool": "gpu"}},
			"labels":           map[string]any{"pools.example.com/pool": "gpu"},
			"taints":           []any{map[string]any{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}},
			"drainGracePeriod": "2m", "maxUnavailable": "50%",
		})),
		explore.Settle(),
	)
	var cases []explore.Perturbation
	if !raceDetector {
		cases = append(cases, bothReplicasKilled)
		// Under -race (make test) a run of the drains takes 20-40 s on 2 cores: there the
		// pool's configuration only; without it (make explore) the drains too.
		workload = append(workload,
			explore.SetNodeReady("node-1", false),
			explore.SetNodeReady("node-2", false),
			explore.Wait(5*time.Minute),
			explore.Settle(),
		)
	}
	explore.Run(t, explore.Config{
		Target: explore.Target{Setup: Setup, Standby: true,
			Manager: controller.ManagerOptions{LeaderElection: true, LeaderElectionID: Name, LeaderElectionNamespace: "kube-system"},
			Env:     controllertest.Options{CRDs: [][]byte{CRD}, Nodes: &apitest.NodesOptions{Count: 3}}},
		Workload: workload,
		Invariants: []explore.Invariant{{Name: "at most maxUnavailable Nodes draining", Check: func(s *explore.State) error {
			if p, ok := explore.Get[*NodePool](s, "nodepools", "", "gpu"); ok && len(p.Status.Draining) > 1 {
				return fmt.Errorf("draining %v", p.Status.Draining)
			}
			return nil
		}}},
		Cases: cases,
		Runs:  2, // a run of this workload takes 1-4 s: make explore makes more
	})
}

// The explorer's own false alarm at 300 runs (make explore, seed 91; fixed in the
// explorer): the leader killed during the drains, then the standby that took over, and no
// process left to finish them. A process with no standby left now restarts.
var bothReplicasKilled = explore.Perturbation{
	explore.Crash{AfterWrite: 14, Standby: true},
	explore.Crash{AfterWrite: 12, Standby: true},
}
