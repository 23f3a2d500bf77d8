package apitest_test

import (
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

func TestWatchFromResourceVersion(t *testing.T) {
	e := newEnv(t)
	a, err := e.s.Create("configmaps", cm("a", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	rv := a.ResourceVersion()
	b, _ := e.s.Create("configmaps", cm("b", nil, nil))
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := next(t, w)
	if ev.Type != apiclient.Added || ev.Object.Name != "b" || ev.Object.ResourceVersion != b.ResourceVersion() {
		t.Fatalf("first event %s %s@%s", ev.Type, ev.Object.Name, ev.Object.ResourceVersion)
	}
	mod, err := e.s.Mutate("configmaps", "default", "a", func(o apitest.Object) { o["data"] = map[string]any{"x": "y"} })
	if err != nil {
		t.Fatal(err)
	}
	ev = next(t, w)
	if ev.Type != apiclient.Modified || ev.Object.Name != "a" || ev.Object.Data["x"] != "y" || ev.Object.ResourceVersion != mod.ResourceVersion() {
		t.Fatalf("modified event %s %+v", ev.Type, ev.Object)
	}
	if err := e.s.Delete("configmaps", "default", "a"); err != nil {
		t.Fatal(err)
	}
	ev = next(t, w)
	if ev.Type != apiclient.Deleted || ev.Object.Name != "a" || ev.Object.Data["x"] != "y" {
		t.Fatalf("deleted event %s %+v", ev.Type, ev.Object)
	}
	if ev.Object.ResourceVersion == mod.ResourceVersion() || ev.Object.ResourceVersion != e.s.ResourceVersion() {
		t.Fatalf("DELETED carries RV %s, want the deletion's %s", ev.Object.ResourceVersion, e.s.ResourceVersion())
	}
	reqs := e.s.RequestsFor(apitest.VerbWatch, "configmaps")
	if len(reqs) != 1 || reqs[0].Param("resourceVersion") != rv {
		t.Fatalf("watch request log %+v", reqs)
	}
}

func TestWatchInitialStateForEmptyAndZeroRV(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			e := newEnv(t)
			e.s.Create("configmaps", cm("a", nil, nil))
			e.s.Create("configmaps", cm("b", nil, nil))
			w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: rv})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, name := range []string{"a", "b"} {
				if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != name {
					t.Fatalf("initial event %s %s", ev.Type, ev.Object.Name)
				}
			}
			e.s.Create("configmaps", cm("c", nil, nil))
			if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "c" {
				t.Fatalf("live event %s %s", ev.Type, ev.Object.Name)
			}
		})
	}
}
