package fleetcopy_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/examples/fleetcopy"
)

// configMap is a ConfigMap of namespace default as apitest takes it.
func configMap(name string, labels, data map[string]any) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": labels},
		"data":     data,
	}
}

var copyLabel = map[string]any{fleetcopy.LabelCopy: "true"}

// copies returns "name=data" of the managed ConfigMaps of s, sorted.
func copies(t *testing.T, s *apitest.Server) []string {
	t.Helper()
	objs, _, err := s.List("configmaps", "default")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		l, _ := md["labels"].(map[string]any)
		if l[fleetcopy.LabelManaged] == "true" {
			out = append(out, fmt.Sprintf("%s=%v", o.Name(), o["data"]))
		}
	}
	slices.Sort(out)
	return out
}

type env struct {
	hub      *controllertest.Env
	provider *multicluster.Manual
	ctrl     *multicluster.Controller
}

func start(t *testing.T) *env {
	e := &env{hub: controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}}), provider: multicluster.NewManual()}
	e.hub.StartManager(controller.ManagerOptions{}, func(mgr *controller.Manager) error {
		var err error
		e.ctrl, err = fleetcopy.Setup(mgr, e.provider, fleetcopy.Options{})
		return err
	})
	return e
}

func member(t *testing.T) *apitest.Server {
	s, err := apitest.Start(apitest.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The labelled hub ConfigMaps are copied to every cluster, followed when they change, put
// back when a copy is changed or deleted in a cluster, copied to a cluster that joins, and
// deleted everywhere when the source goes. Unlabelled ConfigMaps, and a cluster's own
// ConfigMaps, are left alone.
func TestCopiesFollowTheHubInEveryCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := start(t)
		e.hub.Create("configmaps", configMap("settings", copyLabel, map[string]any{"level": "1"}))
		e.hub.Create("configmaps", configMap("private", nil, map[string]any{"x": "y"}))
		a, b := member(t), member(t)
		if _, err := b.Create("configmaps", configMap("own", nil, nil)); err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if err := e.provider.Set(name, s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		want := []string{"settings=map[level:1]"}
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if got := copies(t, s); !slices.Equal(got, want) {
				t.Fatalf("%s's copies: %q, want %q", name, got, want)
			}
		}
		if _, err := b.Get("configmaps", "default", "own"); err != nil {
			t.Errorf("b's own ConfigMap: %v", err)
		}

		// The source changes; a copy is changed in a, deleted in b.
		e.hub.Mutate("configmaps", "default", "settings", func(o apitest.Object) { o["data"] = map[string]any{"level": "2"} })
		synctest.Wait()
		want = []string{"settings=map[level:2]"}
		if got := copies(t, a); !slices.Equal(got, want) {
			t.Fatalf("a's copies after the source changed: %q, want %q", got, want)
		}
		if _, err := a.Update("configmaps", configMap("settings", map[string]any{fleetcopy.LabelManaged: "true"}, map[string]any{"level": "tampered"})); err != nil {
			t.Fatal(err)
		}
		if err := b.Delete("configmaps", "default", "settings"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if got := copies(t, s); !slices.Equal(got, want) {
				t.Fatalf("%s's copies after a cluster changed them: %q, want %q", name, got, want)
			}
		}

		// A cluster joins.
		c := member(t)
		if err := e.provider.Set("c", c.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := copies(t, c); !slices.Equal(got, want) {
			t.Fatalf("c's copies: %q, want %q", got, want)
		}

		// The source goes.
		e.hub.Delete("configmaps", "default", "settings")
		synctest.Wait()
		for name, s := range map[string]*apitest.Server{"a": a, "b": b, "c": c} {
			if got := copies(t, s); len(got) != 0 {
				t.Errorf("%s's copies after the source was deleted: %q", name, got)
			}
		}
		if _, err := b.Get("configmaps", "default", "own"); err != nil {
			t.Errorf("b's own ConfigMap: %v", err)
		}
		if st := e.ctrl.Stats(); st.Errors != 0 {
			t.Errorf("stats %+v, want no error", st)
		}
	})
}
