package widgets

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
)

func isReady(w *Widget) bool { return conditions.IsTrue(w.Status.Conditions, "Ready") }

// A Widget's Pod runs on a simulated node and gets Ready after the probe's delay; a new
// image replaces it. Inside a synctest bubble the delays take no time.
func TestWidget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := controllertest.New(t, controllertest.Options{
			CRDs:    [][]byte{CRD},
			Server:  apitest.Options{InMemory: true},
			Nodes:   &apitest.NodesOptions{StartDelay: 2 * time.Second},
			Timeout: 10 * time.Minute, // on the fake clock
		})
		run := env.StartManager(controller.ManagerOptions{}, Setup)
		env.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "default", "name": "w"},
			"spec":     map[string]any{"image": "app:1", "readyAfterSeconds": 30}})
		start := time.Now()
		controllertest.WaitFor(env, "widgets", "default", "w", isReady)
		if took := time.Since(start); took < 32*time.Second || took > 33*time.Second {
			t.Errorf("Ready after %v, want 32s (start 2s + probe 30s)", took)
		}
		env.WaitForEvent("default", "Widget", "w", "PodCreated")

		env.Mutate("widgets", "default", "w", func(o apitest.Object) {
			o["spec"].(map[string]any)["image"] = "app:2"
		})
		controllertest.WaitFor(env, "widgets", "default", "w", func(w *Widget) bool { return !isReady(w) })
		controllertest.WaitFor(env, "widgets", "default", "w", isReady)
		pod, _ := controllertest.Get[*Pod](env, "pods", "default", "w")
		if pod.Spec.Containers[0].Image != "app:2" {
			t.Errorf("pod image %s", pod.Spec.Containers[0].Image)
		}
		if st := run.Stats(Name); st.Errors != 0 {
			t.Errorf("reconcile errors: %+v", st)
		}
	})
}
