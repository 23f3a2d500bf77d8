package smp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func deployment() mergeschema.Type {
	k, _ := kubeschema.ForKind("apps", "v1", "Deployment")
	return mergeschema.ForKubeType(k.Type)
}

const base = `{"metadata":{"name":"d","labels":{"app":"d","tier":"web"},"finalizers":["a","b"]},
"spec":{"replicas":1,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},
"template":{"spec":{"containers":[
 {"name":"a","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"args":["x","y"]},
 {"name":"b","image":"busybox:1"}]}}}}`

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name, patch, want string
	}{
		{"set image keeps the other containers", `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"a","image":"nginx:2"}]}}}}`,
			`{"metadata":{"finalizers":["a","b"],"labels":{"app":"d","tier":"web"},"name":"d"},"spec":{"replicas":1,"strategy":{"rollingUpdate":{"maxSurge":1},"type":"RollingUpdate"},"template":{"spec":{"containers":[{"args":["x","y"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"image":"nginx:2","name":"a","ports":[{"containerPort":80,"protocol":"TCP"}]},{"image":"busybox:1","name":"b"}]}}}}`},
		// Items of the patch that the original lacks come first, as on the kube-apiserver.
		{"a new container", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"redis"}]}}}}`,
			`[{"name":"c"},{"name":"a"},{"name":"b"}]`},
		{"delete directive", `{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`, `[{"name":"b"}]`},
		{"replace directive in a list", `{"spec":{"template":{"spec":{"containers":[{"name":"z","image":"z"},{"$patch":"replace"}]}}}}`, `[{"name":"z"}]`},
		{"order", `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}}}}`, `[{"name":"b"},{"name":"a"}]`},
		{"patch items come in the patch's order", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"c"},{"name":"a","image":"a2"}]}}}}`, `[{"name":"c"},{"name":"a"},{"name":"b"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply(obj(t, base), obj(t, c.patch), deployment())
			if err != nil {
				t.Fatal(err)
			}
			s := js(got)
			if strings.HasPrefix(c.want, "[") {
				spec := got["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				var names []map[string]any
				for _, x := range spec["containers"].([]any) {
					names = append(names, map[string]any{"name": x.(map[string]any)["name"]})
				}
				s = js(names)
			}
			if s != c.want {
				t.Errorf("got  %s\nwant %s", s, c.want)
			}
		})
	}
}

func TestApplyFields(t *testing.T) {
	get := func(m map[string]any, path ...string) any {
		var cur any = m
		for _, p := range path {
			cur = cur.(map[string]any)[p]
		}
		return cur
	}
	container := func(m map[string]any, i int) map[string]any {
		return get(m, "spec", "template", "spec", "containers").([]any)[i].(map[string]any)
	}
	for _, c := range []struct {
		name, patch string
		check       func(map[string]any) string
		want        string
	}{
		{"env merges by name", `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"20"},{"name":"Z","value":"3"}]}]}}}}`,
			func(m map[string]any) string { return js(container(m, 0)["env"]) }, `[{"name":"X","value":"1"},{"name":"Y","value":"20"},{"name":"Z","value":"3"}]`},
		{"an atomic list is replaced", `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":["z"]}]}}}}`,
			func(m map[string]any) string { return js(container(m, 0)["args"]) }, `["z"]`},
		{"ports merge by containerPort", `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":443}]}]}}}}`,
			func(m map[string]any) string { return js(container(m, 0)["ports"]) }, `[{"containerPort":443},{"containerPort":80,"protocol":"TCP"}]`},
		{"retainKeys clears the unlisted fields", `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`,
			func(m map[string]any) string { return js(get(m, "spec", "strategy")) }, `{"type":"Recreate"}`},
		{"null deletes", `{"metadata":{"labels":{"tier":null}}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "labels")) }, `{"app":"d"}`},
		{"replace directive in a map", `{"metadata":{"labels":{"$patch":"replace","only":"x"}}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "labels")) }, `{"only":"x"}`},
		{"delete directive in a map leaves it empty", `{"metadata":{"labels":{"$patch":"delete"}}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "labels")) }, `{}`},
		{"primitive merge list is a set", `{"metadata":{"finalizers":["c","a"]}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "finalizers")) }, `["c","a","b"]`},
		{"deleteFromPrimitiveList", `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "finalizers")) }, `["b"]`},
		{"new values lose their nulls and directives", `{"metadata":{"annotations":{"x":"1","y":null,"z":{"$patch":"delete"}}}}`,
			func(m map[string]any) string { return js(get(m, "metadata", "annotations")) }, `{"x":"1"}`},
		{"replace at the top", `{"$patch":"replace","kind":"X"}`, func(m map[string]any) string { return js(m) }, `{"kind":"X"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Apply(obj(t, base), obj(t, c.patch), deployment())
			if err != nil {
				t.Fatal(err)
			}
			if s := c.check(got); s != c.want {
				t.Errorf("got %s, want %s", s, c.want)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	for _, c := range []struct {
		patch string
		is    error
		msg   string
	}{
		{`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"frob"}]}}}}`, nil, "unknown patch type: frob in map: map[$patch:frob name:a]"},
		{`{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`, nil, "map: map[image:x] does not contain declared merge key: name"},
		{`{"metadata":{"$retainKeys":"x"}}`, ErrBadPatchFormatForRetainKeys, ""},
		{`{"metadata":{"$retainKeys":["name"],"labels":{"a":"b"}}}`, ErrBadPatchFormatForRetainKeys, ""},
		{`{"metadata":{"$deleteFromPrimitiveList":["a"]}}`, ErrBadPatchFormatForPrimitiveList, ""},
		{`{"spec":{"$setElementOrder":[]}}`, ErrBadPatchFormatForSetElementOrderList, ""},
		{`{"spec":{"template":{"spec":{"containers":[["x"]]}}}}`, nil, "list element types are not identical: [[map[args:[x y] env:[map[name:X value:1] map[name:Y value:2]] image:nginx:1 name:a ports:[map[containerPort:80 protocol:TCP]]] map[image:busybox:1 name:b]] [[x]]]"},
		{`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"merge"}]}}}}`, nil, "merging lists cannot yet be specified in the patch"},
	} {
		_, err := Apply(obj(t, base), obj(t, c.patch), deployment())
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.patch)
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("%s: %v, want %v", c.patch, err, c.is)
		case c.msg != "" && err.Error() != c.msg:
			t.Errorf("%s: %q, want %q", c.patch, err, c.msg)
		}
	}
}

func TestListOfLists(t *testing.T) {
	_, err := Apply(obj(t, `{"metadata":{"finalizers":[]}}`), obj(t, `{"metadata":{"finalizers":[["x"]]}}`), deployment())
	if !errors.Is(err, ErrNoListOfLists) {
		t.Fatalf("%v", err)
	}
}

func TestApplyDoesNotModifyItsArguments(t *testing.T) {
	o, p := obj(t, base), obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x","$patch":"replace"}]}}},"metadata":{"$retainKeys":["name","labels"],"labels":{"app":null}}}`)
	os, ps := js(o), js(p)
	if _, err := Apply(o, p, deployment()); err != nil {
		t.Fatal(err)
	}
	if js(o) != os || js(p) != ps {
		t.Error("Apply changed its arguments")
	}
}

func TestDiffApply(t *testing.T) {
	mod := obj(t, `{"metadata":{"name":"d","labels":{"app":"d","new":"1"},"finalizers":["b","c"]},
"spec":{"replicas":3,"strategy":{"type":"Recreate"},
"template":{"spec":{"containers":[
 {"name":"b","image":"busybox:2"},
 {"name":"a","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":81}],"env":[{"name":"Y","value":"2"}],"args":["y"]}]}}}}`)
	patch := Diff(obj(t, base), mod, deployment())
	got, err := Apply(obj(t, base), patch, deployment())
	if err != nil {
		t.Fatal(err)
	}
	want := fieldpath.Normalize(mod)
	if js(got) != js(want) {
		t.Fatalf("patch %s\ngot  %s\nwant %s", js(patch), js(got), js(want))
	}
	if _, ok := patch["spec"].(map[string]any)["strategy"].(map[string]any)[retainKeys]; !ok {
		t.Errorf("the strategy's patch has no $retainKeys: %s", js(patch))
	}
}
