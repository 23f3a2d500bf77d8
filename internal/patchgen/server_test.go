package patchgen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// deployment makes a Deployment from fuzz input, with every kind of list a strategic merge
// patch treats differently: containers, env and ports (merged by name, containerPort),
// volumes (merged by name), finalizers (a merged list of scalars), tolerations (replaced),
// labels and nodeSelector (maps).
func deployment(g *gen) map[string]any {
	pick := func(all []string) []any {
		var out []any
		for _, v := range all {
			if g.byte()%2 == 0 {
				out = append(out, v)
			}
		}
		if len(out) > 1 && g.byte()%2 == 0 {
			out[0], out[len(out)-1] = out[len(out)-1], out[0]
		}
		return out
	}
	var containers []any
	for _, name := range pick([]string{"app", "sidecar", "proxy"}) {
		c := map[string]any{"name": name, "image": fmt.Sprintf("example.com/%s:%d", name, g.byte()%3)}
		if env := pick([]string{"A", "B", "C"}); len(env) > 0 {
			var vars []any
			for _, e := range env {
				vars = append(vars, map[string]any{"name": e, "value": strconv.Itoa(int(g.byte() % 3))})
			}
			c["env"] = vars
		}
		if ports := pick([]string{"80", "443", "8080"}); len(ports) > 0 {
			var ps []any
			for _, p := range ports {
				ps = append(ps, map[string]any{"containerPort": json.Number(p.(string)), "name": "p" + p.(string), "protocol": "TCP"})
			}
			c["ports"] = ps
		}
		containers = append(containers, c)
	}
	if len(containers) == 0 {
		containers = []any{map[string]any{"name": "app", "image": "example.com/app:0"}}
	}
	spec := map[string]any{"containers": containers}
	if vols := pick([]string{"data", "cache"}); len(vols) > 0 {
		var vs []any
		for _, v := range vols {
			vs = append(vs, map[string]any{"name": v, "emptyDir": map[string]any{}})
		}
		spec["volumes"] = vs
	}
	if tol := pick([]string{"gpu", "spot"}); len(tol) > 0 {
		var ts []any
		for _, k := range tol {
			ts = append(ts, map[string]any{"key": k, "operator": "Exists", "effect": "NoSchedule"})
		}
		spec["tolerations"] = ts
	}
	if g.byte()%2 == 0 {
		spec["nodeSelector"] = map[string]any{"pool": fmt.Sprint(g.byte() % 2)}
	}
	labels := map[string]any{"app": "x"}
	for _, l := range pick([]string{"tier", "team"}) {
		labels[l.(string)] = fmt.Sprint(g.byte() % 2)
	}
	md := map[string]any{"labels": labels}
	if f := pick([]string{"example.com/a", "example.com/b", "example.com/c"}); len(f) > 0 {
		md["finalizers"] = f
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
		"spec": map[string]any{"replicas": json.Number(strconv.Itoa(int(g.byte() % 3))),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}}}
}

// comparable is what a patch can change: the labels, finalizers and spec.
func comparable(o apitest.Object) any {
	md, _ := o["metadata"].(map[string]any)
	return Normalize(map[string]any{"labels": md["labels"], "finalizers": md["finalizers"], "spec": o["spec"]})
}

var nsSeq atomic.Int64

// The three patches made from two Deployments, applied by apitest's strategic merge patch,
// JSON merge patch and JSON patch, give the Deployment the second makes, in a namespace of
// its own per input (deleted with everything in it). The Deployment made from the second is
// made as one, so that both have the server's defaults.
func FuzzPatchesOnAPITest(f *testing.F) {
	// The seed corpus is testdata/fuzz/FuzzPatchesOnAPITest.
	srv := apitest.NewServer()
	f.Cleanup(srv.Close)
	typ, ok := kubeschema.ForKind("apps", "v1", "Deployment")
	if !ok {
		f.Fatal("no Deployment in kubeschema")
	}
	f.Fuzz(func(t *testing.T, a, b []byte) { checkPatchesOnServer(t, srv, typ.Type, a, b) })
}

func checkPatchesOnServer(t *testing.T, srv *apitest.Server, typ *kubeschema.Type, a, b []byte) {
	{
		ns := fmt.Sprintf("fuzz-%d", nsSeq.Add(1))
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = srv.Delete("namespaces", "", ns) }()
		create := func(name string, obj map[string]any) map[string]any {
			obj = clone(obj).(map[string]any)
			md := obj["metadata"].(map[string]any)
			md["name"], md["namespace"] = name, ns
			for _, k := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"} {
				delete(md, k)
			}
			delete(obj, "status")
			o, err := srv.Create("deployments.apps", obj)
			if err != nil {
				t.Fatalf("creating %s: %v\n%v", name, err, obj)
			}
			return map[string]any(o)
		}
		from := create("from", deployment(&gen{b: a}))
		to := clone(from).(map[string]any)
		next := deployment(&gen{b: b})
		to["metadata"].(map[string]any)["labels"] = next["metadata"].(map[string]any)["labels"]
		to["metadata"].(map[string]any)["finalizers"] = next["metadata"].(map[string]any)["finalizers"]
		to["spec"].(map[string]any)["replicas"] = next["spec"].(map[string]any)["replicas"]
		to["spec"].(map[string]any)["template"] = mergeTemplate(from, next)
		want := comparable(create("to", to))

		smp, err := Strategic(from, to, typ)
		if err != nil {
			t.Fatal(err)
		}
		patches := map[apiclient.PatchType]any{apiclient.StrategicMergePatchType: smp, apiclient.MergePatchType: Merge(from, to), apiclient.JSONPatchType: JSON(from, to)}
		for _, pt := range []apiclient.PatchType{apiclient.StrategicMergePatchType, apiclient.MergePatchType, apiclient.JSONPatchType} {
			name := "patched-" + strconv.Itoa(len(pt))
			create(name, from)
			body, _ := json.Marshal(patches[pt])
			got, err := srv.Patch("deployments.apps", ns, name, pt, body)
			if err != nil {
				t.Fatalf("%s %s: %v", pt, body, err)
			}
			if c := comparable(got); !Equal(c, want) {
				t.Fatalf("%s %s\nfrom %v\n got %v\nwant %v", pt, body, comparable(apitest.Object(from)), c, want)
			}
		}
	}
}

// mergeTemplate is next's pod template with the server's defaults of from's containers
// kept for the containers both have, so that to differs from from only where next does.
func mergeTemplate(from, next map[string]any) any {
	tmpl := clone(next["spec"].(map[string]any)["template"]).(map[string]any)
	old := map[string]map[string]any{}
	for _, c := range from["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		old[c.(map[string]any)["name"].(string)] = c.(map[string]any)
	}
	for _, c := range tmpl["spec"].(map[string]any)["containers"].([]any) {
		c := c.(map[string]any)
		if o, ok := old[c["name"].(string)]; ok {
			for k, v := range o {
				if _, set := c[k]; !set && k != "env" && k != "ports" {
					c[k] = clone(v)
				}
			}
		}
	}
	return tmpl
}
