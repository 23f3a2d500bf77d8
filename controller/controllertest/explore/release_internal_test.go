package explore

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// fanConfigMap and fanSecret are the fan-in model's objects (this file's own types: the
// external tests register theirs).
type fanConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

type fanSecret struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var (
	_ = kinds.MustRegister[*fanConfigMap](kinds.ConfigMap)
	_ = kinds.MustRegister[*fanSecret](kinds.Secret)
)

// fanIn is a model whose writes depend on how many events it saw before it reconciled:
// for the parent ConfigMap p it creates a child p-<member> per Secret in its cache, then
// writes the count into p. A burst of Secret events delivered at once would race its
// worker (one reconcile seeing one Secret, the next all four, or one seeing all four).
func fanIn(mgr *controller.Manager) error {
	cms := client.TypedFor[*fanConfigMap](mgr.Client())
	secrets, err := controller.InformerFor[*fanSecret](mgr)
	if err != nil {
		return err
	}
	parents := controller.Primary[*fanConfigMap](controller.NewPredicateFuncs(func(c *fanConfigMap) bool { return c.Name == "p" }))
	toParent := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, s *fanSecret) []controller.Request {
		return []controller.Request{{Namespace: s.Namespace, Name: "p"}}
	})
	return controller.NewBuilder(mgr, "fan-in").For(parents).Watches(controller.Watched(toParent)).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				return controller.Result{}, nil
			}
			if err != nil {
				return controller.Result{}, err
			}
			ss := secrets.Lister().List(labels.Everything())
			for _, s := range ss {
				child := &fanConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: "p-" + s.Name}}
				if _, err := cms.Create(ctx, child, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
					return controller.Result{}, err
				}
			}
			if n := strconv.Itoa(len(ss)); p.Data["count"] != n {
				p.Data = map[string]string{"count": n}
				if _, err := cms.Update(ctx, p, client.UpdateOptions{}); err != nil {
					return controller.Result{}, err
				}
			}
			return controller.Result{}, nil
		}))
}

// What a released Lag held back reaches the process one event at a time, as every other
// event: the same perturbation makes the same writes and deliveries every time. (Released
// at once, the four Secrets the view of Secrets held back arrived in one burst behind the
// process's gate, and the fan-in's writes depended on the scheduler.)
func TestReleasedHoldIsDeliveredInOrder(t *testing.T) {
	w := Workload{}
	for i := 1; i <= 4; i++ {
		w = append(w, Create("secrets", map[string]any{"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("m%d", i)}}))
	}
	w = append(w, Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "p"}}), Settle())
	cfg := Config{Target: Target{Setup: fanIn}, Workload: w}
	cfg.setDefaults()
	x := &explorer{t: t, cfg: cfg, ignore: map[string]bool{}, name: t.Name(), pkg: "."}
	p := Perturbation{Lag{Resource: "secrets", FromDelivery: 1, Writes: 1}}
	first := x.run(p)
	if first.fail != nil {
		t.Fatalf("the run fails: %s", first.fail)
	}
	for i := range 20 {
		if d := firstDifference(first, x.run(p)); d != "" {
			t.Fatalf("run %d of %s differs from the first: %s\nthe first's trace:\n%v", i+2, p, d, x.render(first))
		}
	}
}
