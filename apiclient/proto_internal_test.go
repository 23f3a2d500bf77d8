package apiclient

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// The resource names protoKindFor derives from the schema table's kinds are the ones the
// kube-apiserver serves: package kinds' table, taken from its discovery documents (and
// checked against them by e2e's TestBuiltinKindsMatchDiscovery).
func TestResourceNamesOfBuiltinKinds(t *testing.T) {
	served := map[meta.GroupVersionKind]string{}
	f, err := parser.ParseFile(token.NewFileSet(), "../kinds/builtin.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if id, isIdent := lit.Type.(*ast.Ident); !isIdent || id.Name != "Info" {
			return true
		}
		fields := map[string]string{}
		for _, e := range lit.Elts {
			kv := e.(*ast.KeyValueExpr)
			if bl, ok := kv.Value.(*ast.BasicLit); ok {
				fields[kv.Key.(*ast.Ident).Name], _ = strconv.Unquote(bl.Value)
			}
		}
		served[meta.GroupVersionKind{Group: fields["Group"], Version: fields["Version"], Kind: fields["Kind"]}] = fields["Resource"]
		return true
	})
	if len(served) < 50 {
		t.Fatalf("%d kinds read from package kinds", len(served))
	}
	checked := 0
	for _, ki := range kubeschema.Kinds() {
		res, ok := served[meta.GroupVersionKind{Group: ki.Group, Version: ki.Version, Kind: ki.Kind}]
		if !ok || ki.List == nil {
			continue
		}
		checked++
		gvr := meta.GroupVersionResource{Group: ki.Group, Version: ki.Version, Resource: res}
		pk := protoKindFor(gvr, "")
		if pk == nil || pk.kind != ki.Kind || pk.obj != ki.Type || pk.list != ki.List {
			t.Errorf("%v: protoKindFor gives %+v, want kind %s", gvr, pk, ki.Kind)
		}
		if byKind := protoKindFor(gvr, ki.Kind); byKind == nil || byKind.obj != ki.Type {
			t.Errorf("%v with kind %s: %+v", gvr, ki.Kind, byKind)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d served kinds of the schema table checked", checked)
	}
	// Every other resource name gives no protobuf kind: JSON.
	for _, gvr := range []meta.GroupVersionResource{{Version: "v1", Resource: "widgets"}, {Group: "example.com", Version: "v1", Resource: "pods"}, {Version: "v2", Resource: "pods"}} {
		if pk := protoKindFor(gvr, ""); pk != nil {
			t.Errorf("%v: %+v", gvr, pk)
		}
	}
	for _, kind := range []string{"Endpoints", "Ingress", "NetworkPolicy", "Lease", "Pod", "Gateway", "Policy"} {
		want := map[string]string{"Endpoints": "endpoints", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
			"Lease": "leases", "Pod": "pods", "Gateway": "gateways", "Policy": "policies"}[kind]
		if got := resourceName(kind); got != want {
			t.Errorf("resourceName(%s) = %s, want %s", kind, got, want)
		}
	}
}
