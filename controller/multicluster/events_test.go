package multicluster_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/promtest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// The Events a reconciler records with its cluster's EventRecorderFor are written to that
// cluster, about its object, and nowhere else (not the hub, not another cluster); the
// Fleet's metrics count them under the cluster's label.
func TestEventsLandOnTheirClusterLabelledByIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := map[string]*apitest.Server{"a": member(t, "a"), "b": member(t, "b")}
		rec := &recorder{fn: func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
			cm := testobj.NewConfigMap(req.Namespace, req.Name, nil)
			cm.UID = "uid-" + req.Name
			cl.EventRecorderFor("copier").Eventf(cm, "Normal", "Copied", "copied in cluster %s", cl.Name())
			return controller.Result{}, nil
		}}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{}, rec)
		for name, s := range servers {
			if err := e.provider.Set(name, s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		// events lists the Events of s as "object reason component: message".
		events := func(s *apitest.Server) []string {
			objs, _, err := s.List("events", "default")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, o := range objs {
				inv, _ := o["involvedObject"].(map[string]any)
				src, _ := o["source"].(map[string]any)
				out = append(out, fmt.Sprintf("%v/%v %v %v: %v", inv["kind"], inv["name"], o["reason"], src["component"], o["message"]))
			}
			slices.Sort(out)
			return out
		}
		want := map[string][]string{
			"a": {"ConfigMap/a Copied copier: copied in cluster a"},
			"b": {"ConfigMap/b Copied copier: copied in cluster b"},
		}
		for name, s := range servers {
			for i := 0; ; i++ {
				synctest.Wait()
				got := events(s)
				if slices.Equal(got, want[name]) {
					break
				}
				if i == 10 {
					t.Fatalf("cluster %s has the Events %q, want %q", name, got, want[name])
				}
				time.Sleep(time.Second) // fake time: the broadcaster's writes
			}
		}
		if got := events(e.env.Server); len(got) != 0 {
			t.Errorf("the hub has the Events %q", got)
		}

		var buf bytes.Buffer
		if err := e.run.Manager.Registry().WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		fams, err := promtest.Parse(buf.String())
		if err != nil {
			t.Fatal(err)
		}
		created := map[string]float64{}
		for _, s := range fams["informerkit_multicluster_events"].Samples {
			if s.Labels["outcome"] == "created" {
				created[s.Labels["cluster"]] = s.Value
			}
		}
		if created["a"] != 1 || created["b"] != 1 || len(created) != 2 {
			t.Errorf("Events created by cluster: %v, want a and b 1 each", created)
		}
	})
}
