package ssa

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/internal/kubeproto"
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

func kind(t testing.TB, group, version, k string) (mergeschema.Type, func() map[string]any) {
	ki, ok := kubeschema.ForKind(group, version, k)
	if !ok {
		t.Fatalf("no kind %s", k)
	}
	av := version
	if group != "" {
		av = group + "/" + version
	}
	return mergeschema.ForKubeType(ki.Type), func() map[string]any {
		m, _ := kubeproto.Decode(ki.Type, nil)
		m["apiVersion"], m["kind"] = av, k
		return m
	}
}

// The fieldsV1 a kube-apiserver v1.36.3 recorded for this apply of a pod (see
// internal/fieldpath's tests).
const podConfig = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"fp","labels":{"b":"1","a":"2","a.b/c":"x"},"finalizers":["z.io/a","a.io/b"]},"spec":{"containers":[{"name":"c","image":"x","ports":[{"containerPort":443},{"containerPort":80},{"containerPort":53,"protocol":"UDP"}],"args":["b","a"]}],"tolerations":[{"key":"k","operator":"Exists"}]}}`

const podFields = `{"f:metadata":{"f:finalizers":{"v:\"a.io/b\"":{},"v:\"z.io/a\"":{}},"f:labels":{"f:a":{},"f:a.b/c":{},"f:b":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":53,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}},"k:{\"containerPort\":443,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},"f:tolerations":{}}}`

func TestFieldSetIsTheServers(t *testing.T) {
	pod, _ := kind(t, "", "v1", "Pod")
	s := FieldSet(obj(t, podConfig), pod).Difference(stripped)
	if got := string(s.FieldsV1()); got != podFields {
		t.Fatalf("got  %s\nwant %s", got, podFields)
	}
}

func TestMergeOrdersItemsAsApplyDoes(t *testing.T) {
	list := &mergeschema.Node{What: mergeschema.List, Keys: []string{"name"}, Element: &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{
		"name": {Type: mergeschema.StringType}, "v": {Type: mergeschema.StringType}}}}
	typ := &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{"l": {Type: list}}}
	for _, c := range []struct{ live, config, want string }{
		{`[{"name":"a"},{"name":"b"},{"name":"c"}]`, `[{"name":"c"},{"name":"a","v":"1"}]`, `[{"name":"b"},{"name":"c"},{"name":"a","v":"1"}]`},
		{`[{"name":"a"},{"name":"b"}]`, `[{"name":"x"}]`, `[{"name":"a"},{"name":"b"},{"name":"x"}]`},
		{`[{"name":"a"},{"name":"b"}]`, `[{"name":"b"},{"name":"x"},{"name":"a"}]`, `[{"name":"b"},{"name":"x"},{"name":"a"}]`},
		{`[{"name":"a","v":"1"},{"name":"a","v":"2"}]`, `[{"name":"a","v":"3"}]`, `[{"name":"a","v":"3"}]`},
	} {
		got := Merge(obj(t, `{"l":`+c.live+`}`), obj(t, `{"l":`+c.config+`}`), typ)
		if s := js(got.(map[string]any)["l"]); s != c.want {
			t.Errorf("live %s config %s: got %s, want %s", c.live, c.config, s, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	pod, _ := kind(t, "", "v1", "Pod")
	c := Compare(obj(t, `{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"x","image":"1"}]}}`),
		obj(t, `{"metadata":{"labels":{"a":"1","c":"3"}},"spec":{"containers":[{"name":"x","image":"2"},{"name":"y"}]}}`), pod)
	for name, got := range map[string]*fieldpath.Set{"added": c.Added, "modified": c.Modified, "removed": c.Removed} {
		want := map[string]string{
			"added":    `{"f:metadata":{"f:labels":{"f:c":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"y\"}":{".":{},"f:name":{}}}}}`,
			"modified": `{"f:spec":{"f:containers":{"k:{\"name\":\"x\"}":{"f:image":{}}}}}`,
			"removed":  `{"f:metadata":{"f:labels":{"f:b":{}}}}`,
		}[name]
		if string(got.FieldsV1()) != want {
			t.Errorf("%s: %s, want %s", name, got.FieldsV1(), want)
		}
	}
}

func TestValidate(t *testing.T) {
	cm, _ := kind(t, "", "v1", "ConfigMap")
	pod, _ := kind(t, "", "v1", "Pod")
	for _, c := range []struct {
		typ  mergeschema.Type
		in   string
		want string
	}{
		{cm, `{"foo":1}`, ".foo: field not declared in schema"},
		{cm, `{"data":{"x":1}}`, ".data.x: expected string, got &value.valueUnstructured{Value:1}"},
		{pod, `{"spec":{"containers":[{"name":"c"},{"name":"c"}]}}`, `.spec.containers: duplicate entries for key [name="c"]`},
		{pod, `{"spec":{"containers":[{"image":"c"}]}}`, `.spec.containers: element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn't have default values for any key fields)`},
		{pod, `{"spec":{"terminationGracePeriodSeconds":"x","hostNetwork":"y"}}`, "errors:\n  .spec.hostNetwork: expected boolean, got &{y}\n  .spec.terminationGracePeriodSeconds: expected numeric (int or float), got string"},
		{pod, `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":1}}}]}}`, ""},
	} {
		got := ""
		if errs := Validate(obj(t, c.in), c.typ); errs != nil {
			got = errs.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// clock gives each call the next second.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

func configMaps(t *testing.T) *FieldManager {
	typ, empty := kind(t, "", "v1", "ConfigMap")
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return &FieldManager{Schema: typ, APIVersion: "v1", Kind: "ConfigMap", Empty: empty, Now: c.now}
}

func cm(data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":` + data + `}`
}

// managed renders managedFields as "manager/operation fields" lines.
func managed(t *testing.T, o map[string]any) string {
	t.Helper()
	mf, _ := meta(o)["managedFields"].([]any)
	var lines []string
	for _, e := range mf {
		m := e.(map[string]any)
		lines = append(lines, m["manager"].(string)+"/"+m["operation"].(string)+" "+string(m["fieldsV1"].(json.RawMessage)))
	}
	return strings.Join(lines, "\n")
}

func TestApplyAndUpdate(t *testing.T) {
	fm := configMaps(t)
	live, changed, err := fm.Apply(nil, obj(t, cm(`{"x":"1","y":"2"}`)), "m1", false)
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	if got, want := managed(t, live), `m1/Apply {"f:data":{"f:x":{},"f:y":{}}}`; got != want {
		t.Fatalf("create: %s, want %s", got, want)
	}
	if _, changed, err := fm.Apply(live, obj(t, cm(`{"x":"1","y":"2"}`)), "m1", false); err != nil || changed {
		t.Fatalf("the same apply again changes the object: %v %v", changed, err)
	}

	_, _, err = fm.Apply(live, obj(t, cm(`{"x":"10","y":"2"}`)), "m2", false)
	var ce *ConflictError
	if !errors.As(err, &ce) || err.Error() != `Apply failed with 1 conflict: conflict with "m1": .data.x` {
		t.Fatalf("conflict: %v", err)
	}
	live, _, err = fm.Apply(live, obj(t, cm(`{"x":"10","y":"2","z":"3"}`)), "m2", true)
	if err != nil {
		t.Fatal(err)
	}
	want := `m1/Apply {"f:data":{"f:y":{}}}` + "\n" + `m2/Apply {"f:data":{"f:x":{},"f:y":{},"f:z":{}}}`
	if got := managed(t, live); got != want {
		t.Fatalf("force: %s\nwant %s", got, want)
	}
	// m1 stops applying y, which m2 also owns: it stays. m2 stops applying z: it goes.
	live, _, _ = fm.Apply(live, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`), "m1", false)
	live, _, _ = fm.Apply(live, obj(t, cm(`{"x":"10","y":"2"}`)), "m2", false)
	if got := js(live["data"]); got != `{"x":"10","y":"2"}` {
		t.Fatalf("after dropping fields: %s", got)
	}

	next := obj(t, js(live))
	next["data"].(map[string]any)["y"] = "20"
	next["data"].(map[string]any)["e"] = "1"
	fm.Update(live, next, "editor")
	want = `m2/Apply {"f:data":{"f:x":{}}}` + "\n" + `editor/Update {"f:data":{"f:e":{},"f:y":{}}}`
	if got := managed(t, next); got != want {
		t.Fatalf("update: %s\nwant %s", got, want)
	}
	_, _, err = fm.Apply(next, obj(t, cm(`{"x":"10","y":"3"}`)), "m2", false)
	if err == nil || err.Error() != `Apply failed with 1 conflict: conflict with "editor" using v1: .data.y` {
		t.Fatalf("conflict with an updater: %v", err)
	}
}

func TestUpdateWithoutManagedFieldsStaysUntracked(t *testing.T) {
	fm := configMaps(t)
	live := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u"},"data":{"a":"1"}}`)
	next := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u"},"data":{"a":"2"}}`)
	fm.Update(live, next, "x")
	if _, ok := meta(next)["managedFields"]; ok {
		t.Fatal("an object without managedFields got some from an update")
	}
	out, _, err := fm.Apply(next, obj(t, cm(`{"b":"1"}`)), "applier", false)
	if err != nil {
		t.Fatal(err)
	}
	want := `applier/Apply {"f:data":{"f:b":{}}}` + "\n" + `before-first-apply/Update {"f:data":{".":{},"f:a":{}}}`
	if got := managed(t, out); got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
}

func TestUpdatersAreCapped(t *testing.T) {
	fm := configMaps(t)
	live, _, _ := fm.Apply(nil, obj(t, cm(`{"a":"1"}`)), "applier", false)
	for i := range 12 {
		next := obj(t, js(live))
		next["data"].(map[string]any)["k"+string(rune('a'+i))] = "v"
		fm.Update(live, next, "u"+string(rune('a'+i)))
		live = next
	}
	got := managed(t, live)
	if n := strings.Count(got, "/Update"); n != 10 || !strings.Contains(got, `ancient-changes/Update {"f:data":{"f:ka":{},"f:kb":{},"f:kc":{}}}`) || strings.Contains(got, "ua/") {
		t.Fatalf("%d updaters:\n%s", n, got)
	}
}

func TestKubectlMovesToServerSideApply(t *testing.T) {
	fm := configMaps(t)
	la := `{"apiVersion":"v1","data":{"x":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"a"}}`
	created := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":`+js(la)+`}},"data":{"x":"1","o":"other"}}`)
	fm.Update(nil, created, "kubectl-client-side-apply")
	out, _, err := fm.Apply(created, obj(t, cm(`{"x":"2"}`)), "kubectl", false)
	if err != nil {
		t.Fatalf("fields of the last-applied-configuration are kubectl's: %v", err)
	}
	if got := js(out["data"]); got != `{"o":"other","x":"2"}` {
		t.Errorf("data %s", got)
	}
	if got := meta(out)["annotations"].(map[string]any)[lastAppliedAnnotation]; got != js(obj(t, cm(`{"x":"2"}`)))+"\n" {
		t.Errorf("last-applied %q", got)
	}
	if _, _, err := fm.Apply(created, obj(t, cm(`{"o":"mine"}`)), "kubectl", false); err == nil {
		t.Error("a field outside the last-applied-configuration conflicts")
	}
}

func TestApplyErrors(t *testing.T) {
	fm := configMaps(t)
	for _, c := range []struct{ config, want string }{
		{`{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"a"}}`, "invalid object type: /v2, Kind=ConfigMap"},
		{`{"metadata":{"name":"a"}}`, "invalid object type: /, Kind="},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[]}}`, "metadata.managedFields must be nil"},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"foo":1}`, "failed to create typed patch object (/a; /v1, Kind=ConfigMap): .foo: field not declared in schema"},
	} {
		_, _, err := fm.Apply(nil, obj(t, c.config), "m", false)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.config, err, c.want)
		}
	}
}
