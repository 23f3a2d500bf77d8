package explore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllertest/explore"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap is the model controllers' object.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var _ = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

func parent(name string) map[string]any {
	return map[string]any{"metadata": map[string]any{"namespace": "default", "name": name, "labels": map[string]any{"role": "parent"}}}
}

// threeWrites is the model: for each parent ConfigMap it creates <name>-a, then <name>-b,
// then marks the parent done. Its injected bug: a process that finds -a and -b but did not
// make them itself (it restarted between the second and the third write) creates a stray
// <name>-x. Only a crash right after write 2 reaches it.
func threeWrites(mgr *controller.Manager) error {
	cms := client.TypedFor[*ConfigMap](mgr.Client())
	var mu sync.Mutex
	started := map[string]bool{}
	parents := controller.Primary[*ConfigMap](controller.NewPredicateFuncs(func(c *ConfigMap) bool { return c.Labels["role"] == "parent" }))
	return controller.NewBuilder(mgr, "model").For(parents).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil || p.Data["phase"] == "done" {
				if meta.IsNotFound(err) {
					err = nil
				}
				return controller.Result{}, err
			}
			_, errA := cms.Get(ctx, req.Namespace, req.Name+"-a", client.GetOptions{})
			_, errB := cms.Get(ctx, req.Namespace, req.Name+"-b", client.GetOptions{})
			mu.Lock()
			mine := started[req.Name]
			started[req.Name] = true
			mu.Unlock()
			if errA == nil && errB == nil && !mine {
				// The injected bug.
				stray := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-x"}}
				if _, err := cms.Create(ctx, stray, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
					return controller.Result{}, err
				}
			}
			for _, suffix := range []string{"-a", "-b"} {
				child := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name + suffix}}
				if _, err := cms.Create(ctx, child, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
					return controller.Result{}, err
				}
			}
			p.Data = map[string]string{"phase": "done"}
			_, err = cms.Update(ctx, p, client.UpdateOptions{})
			return controller.Result{}, err
		}))
}

// The explorer finds the model's bug, and at the point where it was injected: a crash
// right after the second write; the report replays it.
func TestModelBugFoundAtItsPoint(t *testing.T) {
	rep := explore.Find(t, explore.Config{
		Target:   explore.Target{Setup: threeWrites},
		Workload: explore.Workload{explore.Create("configmaps", parent("p"))},
		Runs:     40,
	})
	if rep.Finding == nil {
		t.Fatalf("the model's bug was not found: %s", rep)
	}
	f := rep.Finding
	if got := f.Shrunk.String(); got != "crash(after-write=2)" {
		t.Errorf("shrunk to %s, want crash(after-write=2)\n%s", got, rep)
	}
	if !f.Replayed || f.Failure.Oracle != "end state" {
		t.Errorf("replayed %v, oracle %q\n%s", f.Replayed, f.Failure.Oracle, rep)
	}
	if rep.Nondeterministic != "" {
		t.Errorf("the reference run is not deterministic: %s", rep.Nondeterministic)
	}
	t.Logf("found in %d runs (%v): %s\n%s", rep.Runs, rep.Elapsed, f.Shrunk, rep)
}

// Secret is the stale model's child.
type Secret struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var _ = kinds.MustRegister[*Secret](kinds.Secret)

func setData(k, v string) func(apitest.Object) {
	return func(o apitest.Object) { o["data"] = map[string]any{k: v} }
}

// transitions is the unobserved model: it creates <name>-two when it sees the parent's
// data go from v=1 to v=2, an edge it reacts to (the injected bug: a level-triggered
// controller would look at v alone). Only a merge of the two updates hides it.
func transitions(mgr *controller.Manager) error {
	cms := client.TypedFor[*ConfigMap](mgr.Client())
	var mu sync.Mutex
	last := map[string]string{}
	parents := controller.Primary[*ConfigMap](controller.NewPredicateFuncs(func(c *ConfigMap) bool { return c.Labels["role"] == "parent" }))
	return controller.NewBuilder(mgr, "model").For(parents).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := parents.Informer().Lister().Get(req.Namespace, req.Name)
			if err != nil {
				return controller.Result{}, nil
			}
			mu.Lock()
			before := last[req.Name]
			last[req.Name] = p.Data["v"]
			mu.Unlock()
			if before == "1" && p.Data["v"] == "2" {
				two := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-two"}}
				if _, err := cms.Create(ctx, two, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
					return controller.Result{}, err
				}
			}
			return controller.Result{}, nil
		}))
}

// The explorer finds the unobserved model's bug with a coalescing window over the two
// updates (deliveries 2 and 3), and nothing else.
func TestModelUnobservedFoundAtItsPoint(t *testing.T) {
	rep := explore.Find(t, explore.Config{
		Target: explore.Target{Setup: transitions},
		Workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Update("configmaps", "default", "p", "v=1", setData("v", "1")),
			explore.Update("configmaps", "default", "p", "v=2", setData("v", "2")),
		},
		Kinds: []explore.Kind{explore.Unobserved},
		Runs:  60,
	})
	if rep.Finding == nil {
		t.Fatalf("the model's bug was not found: %s", rep)
	}
	c, ok := rep.Finding.Shrunk[0].(explore.Coalesce)
	if len(rep.Finding.Shrunk) != 1 || !ok || c.FromDelivery > 2 || c.Relist || !rep.Finding.Replayed {
		t.Errorf("found %s, want a merged coalesce from delivery 1 or 2\n%s", rep.Finding.Shrunk, rep)
	}
}

// blindDelete is the stale model: the parent's data keep=false makes it delete the child
// Secret without looking (the injected bug: it acts on its view of the parent alone);
// keep=true makes it create the child. Only a restart against a view one change of the
// parents behind (after the second or the third write) deletes a child the server holds.
func blindDelete(mgr *controller.Manager) error {
	secrets := client.TypedFor[*Secret](mgr.Client())
	parents := controller.Primary[*ConfigMap](controller.NewPredicateFuncs(func(c *ConfigMap) bool { return c.Labels["role"] == "parent" }))
	return controller.NewBuilder(mgr, "model").For(parents).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := parents.Informer().Lister().Get(req.Namespace, req.Name)
			if err != nil {
				return controller.Result{}, nil
			}
			child := &Secret{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
			if p.Data["keep"] == "false" {
				err := secrets.Delete(ctx, child, client.DeleteOptions{})
				if meta.IsNotFound(err) {
					err = nil
				}
				return controller.Result{}, err
			}
			if _, err := secrets.Create(ctx, child, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
				return controller.Result{}, err
			}
			return controller.Result{}, nil
		}))
}

// The explorer finds the stale model's bug with a restart on a view one change behind,
// after the second or the third write.
func TestModelStaleFoundAtItsPoint(t *testing.T) {
	rep := explore.Find(t, explore.Config{
		Target: explore.Target{Setup: blindDelete},
		Workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Update("configmaps", "default", "p", "keep=false", setData("keep", "false")),
			explore.Update("configmaps", "default", "p", "keep=true", setData("keep", "true")),
		},
		Kinds: []explore.Kind{explore.Stale},
		Runs:  80,
	})
	if rep.Finding == nil {
		t.Fatalf("the model's bug was not found: %s", rep)
	}
	c, ok := rep.Finding.Shrunk[0].(explore.Crash)
	if len(rep.Finding.Shrunk) != 1 || !ok || c.Lag != 1 || c.AfterWrite < 2 || rep.Finding.Failure.Oracle != "history" {
		t.Errorf("found %s (%s), want a restart after write 2 or 3 on a view one change behind (history)\n%s",
			rep.Finding.Shrunk, rep.Finding.Failure.Oracle, rep)
	}
}

// Two explorations from the same seeds make the same runs with the same outcomes: a run
// depends on its seed only.
func TestExplorationIsDeterministic(t *testing.T) {
	cfg := explore.Config{
		Target: explore.Target{Setup: blindDelete},
		Workload: explore.Workload{
			explore.Create("configmaps", parent("p")),
			explore.Update("configmaps", "default", "p", "keep=false", setData("keep", "false")),
			explore.Update("configmaps", "default", "p", "keep=true", setData("keep", "true")),
		},
		Runs: 12,
		Seed: 100,
	}
	a, b := explore.Find(t, cfg), explore.Find(t, cfg)
	if a.Nondeterministic != "" || b.Nondeterministic != "" {
		t.Errorf("reference runs differ: %q %q", a.Nondeterministic, b.Nondeterministic)
	}
	for i := range max(len(a.Log), len(b.Log)) {
		if i >= len(a.Log) || i >= len(b.Log) {
			t.Errorf("%d runs, then %d", len(a.Log), len(b.Log))
			break
		}
		if x, y := a.Log[i], b.Log[i]; x.Seed != y.Seed || x.Perturbation.String() != y.Perturbation.String() || x.Outcome != y.Outcome {
			t.Errorf("run %d: seed %d %s %s, then seed %d %s %s", i, x.Seed, x.Perturbation, x.Outcome, y.Seed, y.Perturbation, y.Outcome)
		}
	}
	if t.Failed() {
		// What differs first says which mechanism let the scheduler in.
		for i, r := range []*explore.Report{a, b} {
			t.Logf("exploration %d (reference %+v):\n%s", i+1, r.Reference, r)
			for _, l := range r.Log {
				t.Logf("  seed %d: %s: %s", l.Seed, l.Perturbation, l.Outcome)
			}
		}
	}
}

// A regression case (Config.Cases) runs before the seeded runs, and finds the bug at once.
func TestCasesRunFirst(t *testing.T) {
	rep := explore.Find(t, explore.Config{
		Target:   explore.Target{Setup: threeWrites},
		Workload: explore.Workload{explore.Create("configmaps", parent("p"))},
		Cases:    []explore.Perturbation{{explore.Crash{AfterWrite: 2}}},
	})
	if rep.Finding == nil || rep.Runs != 1 || rep.Finding.Seed != 0 || rep.Finding.Shrunk.String() != "crash(after-write=2)" {
		t.Fatalf("want the case found by the first run: %s", rep)
	}
}
