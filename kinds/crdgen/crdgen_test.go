package crdgen

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/kinds"
)

// INFORMERKIT_UPDATE_GOLDEN=1 rewrites testdata/api.golden.yaml.
const golden = "testdata/api.golden.yaml"

func generate(t *testing.T, patterns ...string) *Result {
	t.Helper()
	res, err := Generate(patterns, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The test API's manifest, compared whole with the golden file (reviewed by hand: every
// marker and every kind of field), then the points that matter checked one by one.
func TestGenerateGolden(t *testing.T) {
	res := generate(t, "./testdata/api/...")
	got, err := Manifest(res.CRDs)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("INFORMERKIT_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the manifest differs from %s (INFORMERKIT_UPDATE_GOLDEN=1 rewrites it):\n%s", golden, got)
	}
	if len(res.CRDs) != 3 {
		t.Fatalf("%d CRDs, want gadgets, policies, widgets", len(res.CRDs))
	}
	if n := res.CRDs[1].Spec.Names; n.Plural != "policies" || n.Singular != "policy" || n.ListKind != "PolicyList" {
		t.Errorf("default names %+v", n)
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "kubebuilder markers are not read") ||
		!strings.Contains(res.Warnings[1], "unknown marker +unknownmarker=1") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestGadgetSchema(t *testing.T) {
	gadgets := generate(t, "./testdata/api/...").CRDs[0]
	if gadgets.Metadata.Name != "gadgets.test.informerkit.io" || gadgets.Spec.Scope != "Cluster" || len(gadgets.Spec.Versions) != 2 {
		t.Fatalf("%+v", gadgets)
	}
	v1, v2 := gadgets.Spec.Versions[0], gadgets.Spec.Versions[1]
	if v1.Name != "v1" || !v1.Storage || v2.Name != "v2" || v2.Storage {
		t.Errorf("storage: v1 %v, v2 %v; want v1, as marked", v1.Storage, v2.Storage)
	}
	if v1.Subresources == nil || v1.Subresources.Status == nil || v1.Subresources.Scale.LabelSelectorPath != ".status.selector" || v2.Subresources != nil {
		t.Errorf("subresources %+v / %+v", v1.Subresources, v2.Subresources)
	}
	if c := v1.AdditionalPrinterColumns; len(c) != 2 || c[1].JSONPath != `.status.conditions[?(@.type=="Ready")].status` ||
		c[1].Description != "Ready, or not" || c[1].Priority != 1 {
		t.Errorf("printer columns %+v", c)
	}
	root := v1.Schema.OpenAPIV3Schema
	if len(root.XValidations) != 1 || root.XValidations[0].Message != "size exceeds maxSize" {
		t.Errorf("root rules %+v", root.XValidations)
	}
	if strings.Join(root.Required, ",") != "spec" {
		t.Errorf("root required %q, want spec only (never metadata, apiVersion, kind; status is omitzero)", root.Required)
	}
	spec := root.Properties["spec"]
	if got := strings.Join(spec.Required, ","); got != "name,required,shape,size" {
		t.Errorf("spec required %q: fields without omitempty, +required, never +optional", got)
	}
	p := spec.Properties
	check := func(name string, want string) {
		t.Helper()
		b, _ := json.Marshal(p[name])
		if !strings.Contains(string(b), want) {
			t.Errorf("spec.%s = %s, want it to contain %s", name, b, want)
		}
	}
	check("replicas", `"type":"integer","format":"int32","default":1,"minimum":0,"maximum":10`)
	check("size", `"type":"number","format":"double","minimum":0,"exclusiveMinimum":true`)
	check("name", `"minLength":1,"maxLength":63,"pattern":"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"`)
	check("mode", `"type":"string","default":"Fast","enum":["Fast","Slow"]`)
	check("tags", `"maxItems":5,"items":{"type":"string"},"x-kubernetes-list-type":"set"`)
	check("ports", `"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","protocol"]`)
	check("labels", `"maxProperties":3,"additionalProperties":{"type":"string"},"x-kubernetes-map-type":"atomic"`)
	check("raw", `{"description":"Raw keeps whatever it is given.","x-kubernetes-preserve-unknown-fields":true}`)
	check("anything", `"type":"object","x-kubernetes-preserve-unknown-fields":true`)
	check("template", `"x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true`)
	check("blob", `"type":"string","format":"byte"`)
	check("widths", `"type":"array","items":{"type":"integer","format":"int32"}`)
	check("port", `"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true`)
	check("nullable", `"nullable":true`)
	check("since", `"type":"string","format":"date-time"`)
	check("selector", `{"description":"Selector picks the nodes.","type":"object","properties":{"matchExpressions":`)
	check("selector", `"additionalProperties":{"type":"string"}}},"x-kubernetes-map-type":"atomic"}`)
	check("selector", `"operator":{"description":"In, NotIn, Exists or DoesNotExist.","type":"string","enum":["In","NotIn","Exists","DoesNotExist"]}`)
	check("grace", `{"description":"Grace is a duration.","type":"string"}`)
	check("maxUnavailable", `{"description":"MaxUnavailable is a count or a percentage.","anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`)
	check("inner", `"required":["depth"],"properties":{"depth":{"description":"Depth is documented inside the anonymous struct.","type":"integer","minimum":1}}`)
	check("color", `"Color comes from an inlined struct."`)
	check("shape", `"Shape comes from an embedded pointer."`)
	for _, gone := range []string{"Ignored", "ignored", "internal", "Embedded", "Pointed", "-"} {
		if _, ok := p[gone]; ok {
			t.Errorf("spec has %q", gone)
		}
	}
	conds := root.Properties["status"].Properties["conditions"]
	if strings.Join(conds.Items.Required, ",") != "lastTransitionTime,message,reason,status,type" || strings.Contains(conds.Items.Description, "\t") {
		t.Errorf("conditions items %+v", conds.Items)
	}
}

// A manifest crdgen writes is what kinds.FromCRD reads.
func TestManifestReadByKinds(t *testing.T) {
	m, err := Manifest(generate(t, "./testdata/api/...").CRDs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := kinds.FromCRD(m, "Gadget")
	if err != nil {
		t.Fatal(err)
	}
	if want := (kinds.Info{Group: "test.informerkit.io", Version: "v1", Kind: "Gadget", Resource: "gadgets", StatusSubresource: true}); info != want {
		t.Errorf("FromCRD: %+v, want %+v", info, want)
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct{ pkg, want string }{
		{"./testdata/bad/recursive", "Node contains itself"},
		{"./testdata/bad/mapkey", "map key int: a JSON object's keys are strings"},
		{"./testdata/bad/marshaler", "marshaler.Opaque has its own JSON form"},
		{"./testdata/bad/marker", "scope is Namespaced or Cluster"},
		{"./testdata/bad/nogroup", "+kind needs group= and version="},
		{"./testdata/bad/nogroup", "a kind has metadata"},
		{"./testdata/nothere", "directory not found"},
	} {
		_, err := Generate([]string{tc.pkg}, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.pkg, err, tc.want)
		}
	}
	// Every mistake of a kind is reported at once.
	res, err := Generate([]string{"./testdata/bad/marker"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "+minimum=zero") || res != nil {
		t.Errorf("a malformed value marker: %v", err)
	}
}

func TestParseArgs(t *testing.T) {
	args, err := parseArgs("name=Ready,jsonPath=`.a[?(@.b==\"c\")]`,description=\"x, y\",flag,last=v")
	if err != nil {
		t.Fatal(err)
	}
	want := []arg{{"name", "Ready", true}, {"jsonPath", `.a[?(@.b=="c")]`, true}, {"description", "x, y", true},
		{"flag", "", false}, {"last", "v", true}}
	if len(args) != len(want) {
		t.Fatalf("%+v", args)
	}
	for i := range want {
		if args[i] != want[i] {
			t.Errorf("arg %d: %+v, want %+v", i, args[i], want[i])
		}
	}
	for _, bad := range []string{`a="unclosed`, `a="x"y`, `=v`} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

func TestPlural(t *testing.T) {
	for in, want := range map[string]string{"widget": "widgets", "policy": "policies", "key": "keys", "class": "classes",
		"box": "boxes", "match": "matches", "mesh": "meshes", "quiz": "quizes"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
}
