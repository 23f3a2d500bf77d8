// Command schemagen writes the schema table of the Kubernetes kinds that apitest serves
// (internal/kubeschema/schema.json in the root module) from the published sources of the release
// pinned in this module's go.mod:
//
//   - the Go types of k8s.io/api and k8s.io/apimachinery (by reflection): JSON names,
//     omitempty/omitzero, inline embedding, pointers, patchStrategy and patchMergeKey, and
//     the protobuf field numbers and wire types of their struct tags;
//   - the generated.proto files next to those types: the protobuf message shape, checked
//     field by field against the struct tags, and the shape of the types that marshal
//     themselves (Time, MicroTime, Duration, Quantity, IntOrString, RawExtension, FieldsV1);
//   - the OpenAPI v3 documents of k8s.io/kubernetes (api/openapi-spec/v3): required fields,
//     formats, x-kubernetes-list-type, -list-map-keys and -map-type; and the OpenAPI
//     definitions the kube-apiserver serves (pkg/generated/openapi): descriptions and enums
//     (the checked-in documents lack the enums and their descriptions);
//   - the kube-apiserver's own defaulting functions (legacyscheme), run on skeleton objects:
//     the defaults a field gets whatever else the object holds.
//
// Usage (from e2e/tools): go run ./schemagen [-o ../../internal/kubeschema/schema.json] [-check]
//
// -check compares the generated table with the file instead of writing it and exits 1 if
// they differ (CI runs it so that the checked-in table cannot drift from its sources).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// root is one kind of the table: a kind apitest serves (with its list kind), a subresource
// kind, or a meta.k8s.io kind of the wire protocol.
type root struct {
	group, version, kind string
	obj, list            any
	// defaults: run the kube-apiserver's defaulting (scheme's) on a skeleton of this kind.
	defaults bool
	scheme   *runtime.Scheme
}

// protocolRoots are the kinds of the wire protocol, after the served ones (roots.go).
var protocolRoots = []root{
	{"meta.k8s.io", "v1", "Status", metav1.Status{}, nil, false, nil},
	{"meta.k8s.io", "v1", "DeleteOptions", metav1.DeleteOptions{}, nil, false, nil},
	{"meta.k8s.io", "v1", "WatchEvent", metav1.WatchEvent{}, nil, false, nil},
	{"meta.k8s.io", "v1", "PartialObjectMetadata", metav1.PartialObjectMetadata{}, metav1.PartialObjectMetadataList{}, false, nil},
	{"meta.k8s.io", "v1", "APIResourceList", metav1.APIResourceList{}, nil, false, nil},
	{"meta.k8s.io", "v1", "APIGroupList", metav1.APIGroupList{}, nil, false, nil},
	{"meta.k8s.io", "v1", "APIVersions", metav1.APIVersions{}, nil, false, nil},
	{"apidiscovery.k8s.io", "v2", "APIGroupDiscoveryList", apidiscoveryv2.APIGroupDiscoveryList{}, nil, false, nil},
	{"apidiscovery.k8s.io", "v2beta1", "APIGroupDiscoveryList", apidiscoveryv2beta1.APIGroupDiscoveryList{}, nil, false, nil},
	{"", "", "Unknown", runtime.Unknown{}, nil, false, nil},
}

// special lists the types that marshal themselves, by name, with the JSON form the table
// gives them (kubeschema.Type.JSON). Their protobuf shape comes from generated.proto.
var special = map[string]string{
	"io.k8s.apimachinery.pkg.apis.meta.v1.Time":       "time",
	"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":  "microtime",
	"io.k8s.apimachinery.pkg.apis.meta.v1.Duration":   "duration",
	"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1":   "raw",
	"io.k8s.apimachinery.pkg.api.resource.Quantity":   "quantity",
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
	"io.k8s.apimachinery.pkg.runtime.RawExtension":    "raw",
}

// derived lists defaults that the skeleton run finds but that depend on other fields (or
// copy them): they are not constants, so the table leaves them out and apitest computes
// them in code. Each entry says why.
var derived = map[string]string{
	"io.k8s.api.core.v1.Container.imagePullPolicy":                         "Always for an image tagged :latest (or untagged), IfNotPresent otherwise",
	"io.k8s.api.core.v1.EphemeralContainer.imagePullPolicy":                "as Container",
	"io.k8s.api.core.v1.ResourceRequirements.requests":                     "copied from limits, in pods only",
	"io.k8s.api.core.v1.ServicePort.targetPort":                            "copied from port",
	"io.k8s.api.core.v1.ContainerPort.hostPort":                            "copied from containerPort with hostNetwork",
	"io.k8s.api.core.v1.Namespace.metadata":                                "the label kubernetes.io/metadata.name=<name>",
	"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.labels":               "the namespace name label",
	"io.k8s.api.core.v1.ServiceSpec.sessionAffinityConfig":                 "only with sessionAffinity ClientIP",
	"io.k8s.api.core.v1.ServiceSpec.externalTrafficPolicy":                 "only for NodePort and LoadBalancer services",
	"io.k8s.api.core.v1.ServiceSpec.internalTrafficPolicy":                 "only for ClusterIP, NodePort and LoadBalancer services",
	"io.k8s.api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts":         "only for LoadBalancer services",
	"io.k8s.api.core.v1.LoadBalancerIngress.ipMode":                        "only for LoadBalancer services with an ingress IP",
	"io.k8s.api.core.v1.Volume.emptyDir":                                   "only when the volume names no source",
	"io.k8s.api.core.v1.VolumeSource.emptyDir":                             "only when the volume names no source",
	"io.k8s.api.core.v1.ImageVolumeSource.pullPolicy":                      "as Container.imagePullPolicy, from the reference",
	"io.k8s.api.apps.v1.DeploymentStrategy.rollingUpdate":                  "only with type RollingUpdate",
	"io.k8s.api.apps.v1.RollingUpdateDeployment.maxUnavailable":            "only with type RollingUpdate",
	"io.k8s.api.apps.v1.RollingUpdateDeployment.maxSurge":                  "only with type RollingUpdate",
	"io.k8s.api.core.v1.PodSpec.hostNetwork":                               "not a default",
	"io.k8s.api.batch.v1.JobSpec.podReplacementPolicy":                     "Failed with a podFailurePolicy, TerminatingOrFailed without",
	"io.k8s.api.autoscaling.v2.HPAScalingRules.policies":                   "scaleUp's and scaleDown's differ",
	"io.k8s.api.autoscaling.v2.HPAScalingRules.stabilizationWindowSeconds": "scaleUp's and scaleDown's differ",
	"io.k8s.api.core.v1.EphemeralContainerCommon.imagePullPolicy":          "as Container",
	"io.k8s.api.networking.v1.NetworkPolicySpec.policyTypes":               "Ingress, and Egress with egress rules",
	"io.k8s.api.resource.v1.DeviceTaint.timeAdded":                         "the time of the write",
}

// conditional are defaults the skeleton run cannot see (they apply only when a field is
// absent or holds a given value) written here as data: type.field → JSON value, with the
// condition apitest evaluates (kubeschema.Field.DefaultWhen).
var conditional = map[string]struct{ value, when string }{
	"io.k8s.api.apps.v1.DeploymentStrategy.rollingUpdate":          {`{}`, "type=RollingUpdate"},
	"io.k8s.api.apps.v1.RollingUpdateDeployment.maxUnavailable":    {`"25%"`, ""},
	"io.k8s.api.apps.v1.RollingUpdateDeployment.maxSurge":          {`"25%"`, ""},
	"io.k8s.api.core.v1.ServiceSpec.internalTrafficPolicy":         {`"Cluster"`, "type=ClusterIP|NodePort|LoadBalancer"},
	"io.k8s.api.core.v1.ServiceSpec.externalTrafficPolicy":         {`"Cluster"`, "type=NodePort|LoadBalancer"},
	"io.k8s.api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts": {`true`, "type=LoadBalancer"},
	"io.k8s.api.rbac.v1.Subject.apiGroup":                          {`"rbac.authorization.k8s.io"`, "kind=User|Group"},
}

func main() {
	out := flag.String("o", "../../internal/kubeschema/schema.json", "output file")
	stubsOut := flag.String("stubs", "../../testdata/kube-apiserver/stubs.json", "the stubs' output file")
	served := flag.String("served", "../../testdata/kube-apiserver/served.json", "the recording of the kube-apiserver's resources")
	check := flag.Bool("check", false, "compare with the output files instead of writing them")
	flag.Parse()
	if err := run(*out, *stubsOut, *served, *check); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(out, stubsOut, servedPath string, check bool) error {
	g := &gen{types: map[string]*Type{}, protos: map[string]*protoMessage{}, openapi: map[string]*oaSchema{}, protoPkgs: map[string]bool{}}
	served, err := readServed(servedPath)
	if err != nil {
		return err
	}
	g.served = served
	if g.roots, err = servedRoots(served); err != nil {
		return err
	}
	g.roots = append(g.roots, protocolRoots...)
	if err := g.run(); err != nil {
		return err
	}
	b, docs, err := g.encode()
	if err != nil {
		return err
	}
	stubs, err := g.stubs()
	if err != nil {
		return err
	}
	files := []struct {
		path string
		b    []byte
		what string
	}{
		{out, b, fmt.Sprintf("%d types", len(g.types))},
		{filepath.Join(filepath.Dir(out), "descriptions", "descriptions.json"), docs, "descriptions"},
		{stubsOut, stubs, "stubs"},
	}
	for _, f := range files {
		if check {
			old, err := os.ReadFile(f.path)
			if err != nil {
				return err
			}
			if !bytes.Equal(old, f.b) {
				return fmt.Errorf("%s is not what its sources generate: run `make schema` (cd e2e/tools && go run ./schemagen)", f.path)
			}
			fmt.Printf("schemagen: %s is up to date (%s)\n", f.path, f.what)
			continue
		}
		if err := os.WriteFile(f.path, f.b, 0o644); err != nil {
			return err
		}
		fmt.Printf("schemagen: wrote %s (%s, %d bytes)\n", f.path, f.what, len(f.b))
	}
	return nil
}

// Table is the file's content (kubeschema parses the same shape).
type Table struct {
	Source    string     `json:"source"`
	Kinds     []Kind     `json:"kinds"`
	Resources []Resource `json:"resources"`
	Types     []*Type    `json:"types"`
}

// Kind maps a group/version/kind to its type (and list type).
type Kind struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version,omitempty"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	ListType string `json:"listType,omitempty"`
}

// Type is one message type.
type Type struct {
	Name        string `json:"name"`
	Go          string `json:"go,omitempty"`
	JSON        string `json:"json,omitempty"`
	Description string `json:"description,omitempty"`
	// MapType is the type's own x-kubernetes-map-type ("atomic" for +structType=atomic).
	MapType string   `json:"mapType,omitempty"`
	Fields  []*Field `json:"fields"`
}

// Field is one field of a Type.
type Field struct {
	Name          string          `json:"name"`
	GoName        string          `json:"go,omitempty"`
	ProtoName     string          `json:"protoName,omitempty"`
	Number        int             `json:"number,omitempty"`
	Wire          string          `json:"wire,omitempty"`
	Kind          string          `json:"kind"`
	Type          string          `json:"type,omitempty"`
	Repeated      bool            `json:"repeated,omitempty"`
	MapKey        string          `json:"mapKey,omitempty"`
	Pointer       bool            `json:"pointer,omitempty"`
	OmitEmpty     bool            `json:"omitempty,omitempty"`
	OmitZero      bool            `json:"omitzero,omitempty"`
	Inline        bool            `json:"inline,omitempty"`
	NoJSON        bool            `json:"noJSON,omitempty"`
	PatchStrategy string          `json:"patchStrategy,omitempty"`
	PatchMergeKey string          `json:"patchMergeKey,omitempty"`
	ListType      string          `json:"listType,omitempty"`
	ListMapKeys   []string        `json:"listMapKeys,omitempty"`
	MapType       string          `json:"mapType,omitempty"`
	Required      bool            `json:"required,omitempty"`
	Format        string          `json:"format,omitempty"`
	Default       json.RawMessage `json:"default,omitempty"`
	DefaultWhen   string          `json:"defaultWhen,omitempty"`
	DefaultKinds  []string        `json:"defaultKinds,omitempty"`
	Enum          []string        `json:"enum,omitempty"`
	Description   string          `json:"description,omitempty"`
}

type gen struct {
	defs map[string]common.OpenAPIDefinition // the served OpenAPI definitions, by name
	// producedBy: type.field → kinds whose skeleton got the default.
	producedBy map[string]map[string]bool
	curKind    string
	types      map[string]*Type
	goTypes    map[string]reflect.Type
	protos     map[string]*protoMessage
	openapi    map[string]*oaSchema
	kinds      []Kind
	versions   string
	roots      []root
	served     *servedFile
	protoPkgs  map[string]bool // Go packages whose generated.proto is read
}

func (g *gen) run() error {
	g.goTypes = map[string]reflect.Type{}
	if err := g.loadSources(); err != nil {
		return err
	}
	for _, r := range g.roots {
		t := reflect.TypeOf(r.obj)
		if err := g.addType(t); err != nil {
			return err
		}
		k := Kind{Group: r.group, Version: r.version, Kind: r.kind, Type: typeName(t)}
		if r.list != nil {
			lt := reflect.TypeOf(r.list)
			if err := g.addType(lt); err != nil {
				return err
			}
			k.ListType = typeName(lt)
		}
		g.kinds = append(g.kinds, k)
	}
	// The protobuf envelope's own messages.
	for _, n := range []string{"io.k8s.apimachinery.pkg.apis.meta.v1.Timestamp"} {
		if err := g.addProtoOnly(n); err != nil {
			return err
		}
	}
	for _, r := range g.roots {
		if r.defaults {
			if err := g.defaults(r); err != nil {
				return fmt.Errorf("defaults of %s: %w", r.kind, err)
			}
		}
	}
	if err := g.defaultScopes(); err != nil {
		return err
	}
	for key, c := range conditional {
		f := g.field(key)
		if f == nil {
			return fmt.Errorf("conditional default %s: no such field", key)
		}
		f.Default, f.DefaultWhen = json.RawMessage(c.value), c.when
	}
	return nil
}

// field returns the field "type.name", looking through the type's inline fields.
func (g *gen) field(key string) *Field {
	i := strings.LastIndex(key, ".")
	return g.fieldOf(g.types[key[:i]], key[i+1:])
}

func (g *gen) fieldOf(t *Type, name string) *Field {
	if t == nil {
		return nil
	}
	for _, f := range t.Fields {
		if f.Inline {
			if in := g.fieldOf(g.types[f.Type], name); in != nil {
				return in
			}
		} else if f.Name == name {
			return f
		}
	}
	return nil
}

// goList runs `go list` for the directory of a package or module.
func goList(args ...string) (string, error) {
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go list %v: %v: %s", args, err, ee.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (g *gen) loadSources() error {
	g.defs = generatedopenapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef("#/components/schemas/" + path) })
	vers, err := goList("-m", "-f", "{{.Path}} {{.Version}}", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/kubernetes")
	if err != nil {
		return err
	}
	g.versions = strings.ReplaceAll(vers, "\n", ", ")
	// generated.proto of apimachinery's packages (those of the types that marshal
	// themselves); the others are read as their types are met (loadProto).
	if err := g.loadProto("k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/runtime",
		"k8s.io/apimachinery/pkg/api/resource", "k8s.io/apimachinery/pkg/util/intstr",
		"k8s.io/apimachinery/pkg/runtime/schema"); err != nil {
		return err
	}
	kdir, err := goList("-m", "-f", "{{.Dir}}", "k8s.io/kubernetes")
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(kdir, "api", "openapi-spec", "v3", "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no OpenAPI v3 documents under %s: %v", kdir, err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc struct {
			Components struct {
				Schemas map[string]*oaSchema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for n, s := range doc.Components.Schemas {
			if _, ok := g.openapi[n]; !ok {
				g.openapi[n] = s
			}
		}
	}
	return nil
}

// ---- generated.proto ----

type protoMessage struct {
	name   string // OpenAPI-style name
	fields map[int]*protoField
}

type protoField struct {
	label  string // optional, repeated, map
	typ    string // scalar type or message name (OpenAPI-style); for maps the value type
	key    string // map key type
	name   string
	number int
}

var (
	rePackage = regexp.MustCompile(`^package\s+([\w.]+);`)
	reMessage = regexp.MustCompile(`^message\s+(\w+)\s*\{`)
	reField   = regexp.MustCompile(`^\s*(optional|repeated)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;`)
	reMap     = regexp.MustCompile(`^\s*map\s*<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;`)
)

// protoName turns a protobuf package-qualified name (k8s.io.api.core.v1.Pod) into the
// OpenAPI name (io.k8s.api.core.v1.Pod).
func protoName(pkg, n string) string {
	n = strings.TrimPrefix(n, ".")
	if !strings.Contains(n, ".") {
		n = pkg + "." + n
	}
	if rest, ok := strings.CutPrefix(n, "k8s.io."); ok {
		// Go import paths' dashes are underscores in protobuf package names
		// (k8s.io.kube_aggregator); OpenAPI names keep the dashes.
		return "io.k8s." + strings.ReplaceAll(rest, "_", "-")
	}
	return n
}

// loadProto reads the generated.proto of the Go packages not read yet.
func (g *gen) loadProto(pkgs ...string) error {
	var todo []string
	for _, p := range pkgs {
		if !g.protoPkgs[p] {
			g.protoPkgs[p] = true
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	dirs, err := goList(append([]string{"-f", "{{.Dir}}"}, todo...)...)
	if err != nil {
		return err
	}
	for _, dir := range strings.Split(dirs, "\n") {
		if err := g.parseProto(filepath.Join(dir, "generated.proto")); err != nil {
			return err
		}
	}
	return nil
}

var protoScalars = map[string]bool{"string": true, "bool": true, "int32": true, "int64": true, "bytes": true, "double": true, "float": true, "uint32": true, "uint64": true}

func (g *gen) parseProto(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pkg string
	var cur *protoMessage
	for i, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		if m := rePackage.FindStringSubmatch(t); m != nil {
			pkg = m[1]
			continue
		}
		if m := reMessage.FindStringSubmatch(t); m != nil {
			if cur != nil {
				return fmt.Errorf("%s:%d: nested message", path, i+1)
			}
			cur = &protoMessage{name: protoName(pkg, m[1]), fields: map[int]*protoField{}}
			continue
		}
		if t == "}" && cur != nil {
			g.protos[cur.name] = cur
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		scalar := func(s string) string {
			if protoScalars[s] {
				return s
			}
			return protoName(pkg, s)
		}
		if m := reField.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[4])
			cur.fields[n] = &protoField{label: m[1], typ: scalar(m[2]), name: m[3], number: n}
			continue
		}
		if m := reMap.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[4])
			cur.fields[n] = &protoField{label: "map", key: m[1], typ: scalar(m[2]), name: m[3], number: n}
			continue
		}
		if strings.HasPrefix(t, "option") || strings.HasPrefix(t, "reserved") {
			continue
		}
		return fmt.Errorf("%s:%d: unparsed line %q", path, i+1, t)
	}
	return nil
}

// ---- OpenAPI ----

type oaSchema struct {
	Description string               `json:"description"`
	Type        string               `json:"type"`
	Format      string               `json:"format"`
	Required    []string             `json:"required"`
	Properties  map[string]*oaSchema `json:"properties"`
	Default     json.RawMessage      `json:"default"`
	ListType    string               `json:"x-kubernetes-list-type"`
	ListMapKeys []string             `json:"x-kubernetes-list-map-keys"`
	MapType     string               `json:"x-kubernetes-map-type"`
	PatchStrat  string               `json:"x-kubernetes-patch-strategy"`
	PatchKey    string               `json:"x-kubernetes-patch-merge-key"`
}

// ---- Go types ----

// typeName is the OpenAPI name of a Go type: k8s.io/api/core/v1.Pod → io.k8s.api.core.v1.Pod.
func typeName(t reflect.Type) string {
	p := t.PkgPath()
	if rest, ok := strings.CutPrefix(p, "k8s.io/"); ok {
		p = "io.k8s." + rest
	}
	return strings.ReplaceAll(p, "/", ".") + "." + t.Name()
}

var kindOfProto = map[string]string{
	"string": "string", "bool": "bool", "int32": "int32", "int64": "int64", "bytes": "bytes", "double": "float64",
}

var wireOfProto = map[string]string{
	"string": "bytes", "bool": "varint", "int32": "varint", "int64": "varint", "bytes": "bytes", "double": "fixed64",
}

func (g *gen) addProtoOnly(name string) error {
	if g.types[name] != nil {
		return nil
	}
	pm := g.protos[name]
	if pm == nil {
		return fmt.Errorf("%s: no protobuf message", name)
	}
	t := &Type{Name: name, JSON: special[name]}
	g.types[name] = t
	var nums []int
	for n := range pm.fields {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for _, n := range nums {
		pf := pm.fields[n]
		f := &Field{Name: pf.name, ProtoName: pf.name, Number: n, Repeated: pf.label == "repeated", OmitEmpty: true}
		if k, ok := kindOfProto[pf.typ]; ok {
			f.Kind, f.Wire = k, wireOfProto[pf.typ]
		} else {
			f.Kind, f.Type, f.Wire = "message", pf.typ, "bytes"
			if err := g.addProtoOnly(pf.typ); err != nil {
				return err
			}
		}
		if pf.label == "map" {
			return fmt.Errorf("%s: map in a self-marshalling type", name)
		}
		t.Fields = append(t.Fields, f)
	}
	g.describe(t)
	return nil
}

func (g *gen) addType(rt reflect.Type) error {
	name := typeName(rt)
	if g.types[name] != nil {
		return nil
	}
	if isSelfMarshalling(name) {
		if err := g.addProtoOnly(name); err != nil {
			return err
		}
		g.types[name].Go = rt.PkgPath() + "." + rt.Name()
		return nil
	}
	if rt.Kind() != reflect.Struct {
		return fmt.Errorf("%s is a %s, not a struct", name, rt.Kind())
	}
	t := &Type{Name: name, Go: rt.PkgPath() + "." + rt.Name()}
	g.types[name] = t
	g.goTypes[name] = rt
	if err := g.loadProto(rt.PkgPath()); err != nil {
		return err
	}
	pm := g.protos[name]
	if pm == nil {
		return fmt.Errorf("%s: no protobuf message", name)
	}
	seen := map[int]bool{}
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		if !sf.IsExported() {
			continue
		}
		jsonTag := sf.Tag.Get("json")
		noJSON := jsonTag == "-"
		if noJSON {
			if sf.Tag.Get("protobuf") == "" {
				continue
			}
			// On the protobuf wire only (runtime.Unknown's raw bytes).
			jsonTag = ""
		}
		jparts := strings.Split(jsonTag, ",")
		f := &Field{Name: jparts[0], GoName: sf.Name, NoJSON: noJSON}
		for _, o := range jparts[1:] {
			switch o {
			case "omitempty":
				f.OmitEmpty = true
			case "omitzero":
				f.OmitZero = true
			case "inline":
				f.Inline = true
			}
		}
		if sf.Anonymous && jparts[0] == "" && !noJSON {
			// encoding/json inlines an embedded struct without a name: 1.37 tags TypeMeta
			// `json:""` where 1.36 said `json:",inline"`.
			f.Inline = true
		}
		pt := sf.Tag.Get("protobuf")
		if f.Name == "" && !f.Inline {
			f.Name = sf.Name
			if noJSON {
				f.Name = tagName(pt)
			}
		}
		if f.Inline && pt == "" {
			// TypeMeta and ListMeta-like embeddings without a protobuf field (TypeMeta is
			// carried by the envelope, not by the message).
			if sf.Type.Name() == "TypeMeta" {
				continue
			}
			return fmt.Errorf("%s.%s: inline field without a protobuf tag", name, sf.Name)
		}
		f.PatchStrategy = sf.Tag.Get("patchStrategy")
		f.PatchMergeKey = sf.Tag.Get("patchMergeKey")
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.Pointer = true
			ft = ft.Elem()
		}
		var pf *protoField
		if pt != "" && pt != "-" {
			parts := strings.Split(pt, ",")
			f.Wire = parts[0]
			f.Number, _ = strconv.Atoi(parts[1])
			for _, p := range parts[2:] {
				if v, ok := strings.CutPrefix(p, "name="); ok {
					f.ProtoName = v
				}
			}
			if pm != nil {
				pf = pm.fields[f.Number]
			}
			if pf == nil {
				return fmt.Errorf("%s.%s: field %d is not in generated.proto", name, sf.Name, f.Number)
			}
			if f.ProtoName == "" {
				f.ProtoName = pf.name // EphemeralContainer's embedded common part has no name=
			}
			if pf.name != f.ProtoName {
				return fmt.Errorf("%s.%s: protobuf name %q, generated.proto says %q", name, sf.Name, f.ProtoName, pf.name)
			}
			if seen[f.Number] {
				return fmt.Errorf("%s.%s: field number %d used twice", name, sf.Name, f.Number)
			}
			seen[f.Number] = true
		} else {
			return fmt.Errorf("%s.%s: no protobuf tag", name, sf.Name)
		}
		if err := g.fieldKind(name, f, ft, pf); err != nil {
			return err
		}
		t.Fields = append(t.Fields, f)
	}
	if pm != nil && len(seen) != len(pm.fields) {
		return fmt.Errorf("%s: the struct has %d protobuf fields, generated.proto %d", name, len(seen), len(pm.fields))
	}
	g.describe(t)
	return nil
}

func isSelfMarshalling(name string) bool {
	switch special[name] {
	case "time", "microtime", "duration", "raw", "quantity", "int-or-string":
		return true
	}
	return false
}

// fieldKind sets Kind/Type/Repeated/MapKey from the Go type, checked against the proto field.
func (g *gen) fieldKind(owner string, f *Field, ft reflect.Type, pf *protoField) error {
	elem := ft
	switch {
	case ft.Kind() == reflect.Slice && ft.Name() != "" && pf != nil && pf.label == "optional" && !protoScalars[pf.typ]:
		// A named slice carried as a wrapper message (metav1.Verbs): valueKind handles it.
	case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
		f.Repeated = true
		elem = ft.Elem()
	case ft.Kind() == reflect.Map:
		f.MapKey = "string"
		if ft.Key().Kind() != reflect.String {
			return fmt.Errorf("%s.%s: map key %s", owner, f.GoName, ft.Key())
		}
		elem = ft.Elem()
	}
	if err := g.valueKind(owner, f, elem); err != nil {
		return err
	}
	if pf == nil {
		return nil
	}
	// Check against generated.proto.
	switch {
	case f.MapKey != "" && pf.label != "map":
		return fmt.Errorf("%s.%s: a map in Go, %s in generated.proto", owner, f.GoName, pf.label)
	case f.Repeated != (pf.label == "repeated"):
		return fmt.Errorf("%s.%s: repeated=%v in Go, %s in generated.proto", owner, f.GoName, f.Repeated, pf.label)
	}
	want := pf.typ
	if k, ok := kindOfProto[want]; ok {
		if k != f.Kind {
			return fmt.Errorf("%s.%s: %s in Go, %s in generated.proto", owner, f.GoName, f.Kind, want)
		}
		// The wire type follows generated.proto, which the generated marshallers follow: a
		// few struct tags disagree (ListMeta.remainingItemCount says bytes, is a varint).
		if f.MapKey == "" {
			f.Wire = wireOfProto[want]
		}
	} else if f.Kind != "message" || f.Type != want {
		return fmt.Errorf("%s.%s: %s %s in Go, %s in generated.proto", owner, f.GoName, f.Kind, f.Type, want)
	} else if f.MapKey == "" {
		// A message is length-delimited whatever the tag says (StatefulSet's
		// rollingUpdate.maxUnavailable is tagged varint).
		f.Wire = "bytes"
	}
	return nil
}

func (g *gen) valueKind(owner string, f *Field, t reflect.Type) error {
	switch t.Kind() {
	case reflect.String:
		f.Kind = "string"
	case reflect.Bool:
		f.Kind = "bool"
	case reflect.Int32:
		f.Kind = "int32"
	case reflect.Int64:
		f.Kind = "int64"
	case reflect.Float64:
		f.Kind = "float64"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			f.Kind = "bytes"
			return nil
		}
		// A named slice carried as a message with one repeated field "items" (ExtraValue).
		name := typeName(t)
		if err := g.loadProto(t.PkgPath()); err != nil {
			return err
		}
		pm := g.protos[name]
		if pm == nil || len(pm.fields) != 1 || pm.fields[1] == nil || pm.fields[1].name != "items" {
			return fmt.Errorf("%s.%s: slice of slices %s", owner, f.GoName, t)
		}
		f.Kind, f.Type = "message", name
		if g.types[name] == nil {
			it := &Type{Name: name, Go: t.PkgPath() + "." + t.Name(), JSON: "array"}
			item := &Field{Name: "items", ProtoName: "items", Number: 1, Repeated: true}
			if err := g.valueKind(name, item, t.Elem()); err != nil {
				return err
			}
			item.Wire = wireOfProto[pm.fields[1].typ]
			it.Fields = []*Field{item}
			g.types[name] = it
		}
	case reflect.Struct:
		f.Kind, f.Type = "message", typeName(t)
		return g.addType(t)
	default:
		return fmt.Errorf("%s.%s: unsupported Go kind %s", owner, f.GoName, t.Kind())
	}
	return nil
}

// describe copies what the OpenAPI document says about the type and its fields.
func (g *gen) describe(t *Type) {
	s := g.openapi[t.Name]
	if s == nil {
		return
	}
	t.Description = s.Description
	t.MapType = s.MapType
	def, hasDef := g.defs[t.Name]
	if hasDef && def.Schema.Description != "" {
		t.Description = def.Schema.Description
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	for _, f := range t.Fields {
		if f.Inline {
			continue
		}
		p := s.Properties[f.Name]
		if p == nil {
			continue
		}
		f.Description = p.Description
		if hasDef {
			if dp, ok := def.Schema.Properties[f.Name]; ok {
				f.Description = dp.Description
				for _, e := range dp.Enum {
					if es, ok := e.(string); ok {
						f.Enum = append(f.Enum, es)
					}
				}
			}
		}
		f.Required = req[f.Name]
		f.Format = p.Format
		f.ListType, f.ListMapKeys, f.MapType = p.ListType, p.ListMapKeys, p.MapType
		if f.PatchStrategy == "" && p.PatchStrat != "" {
			f.PatchStrategy = p.PatchStrat
		}
		if f.PatchMergeKey == "" && p.PatchKey != "" {
			f.PatchMergeKey = p.PatchKey
		}
		// OpenAPI "default" values of required non-pointer fields are their zero values
		// (what Go unmarshalling leaves), not server defaults: keep only real values.
		if len(p.Default) > 0 && !isZeroJSON(p.Default) {
			f.Default = p.Default
		}
	}
}

func tagName(protobufTag string) string {
	for _, p := range strings.Split(protobufTag, ",") {
		if v, ok := strings.CutPrefix(p, "name="); ok {
			return v
		}
	}
	return ""
}

func isZeroJSON(b json.RawMessage) bool {
	switch strings.TrimSpace(string(b)) {
	case `{}`, `""`, `0`, `false`, `[]`, `null`:
		return true
	}
	return false
}

// ---- defaults ----

// defaultScopes sets Field.DefaultKinds on defaults that only some of the kinds holding the
// type get (PodSpec.enableServiceLinks is defaulted in pods, not in pod templates).
func (g *gen) defaultScopes() error {
	holders := map[string][]string{} // type → root kinds whose closure holds it
	for _, r := range g.roots {
		if !r.defaults {
			continue
		}
		seen := map[string]bool{}
		var walk func(string)
		walk = func(n string) {
			if seen[n] || g.types[n] == nil {
				return
			}
			seen[n] = true
			for _, f := range g.types[n].Fields {
				if f.Kind == "message" {
					walk(f.Type)
				}
			}
		}
		walk(typeName(reflect.TypeOf(r.obj)))
		for n := range seen {
			holders[n] = append(holders[n], kindKey(r))
		}
	}
	for key, kinds := range g.producedBy {
		f := g.field(key)
		if f == nil {
			return fmt.Errorf("default of %s: no such field", key)
		}
		typ := key[:strings.LastIndex(key, ".")]
		var only []string
		for _, k := range holders[typ] {
			if kinds[k] {
				only = append(only, k)
			}
		}
		if len(only) < len(holders[typ]) {
			sort.Strings(only)
			f.DefaultKinds = only
		}
	}
	return nil
}

func kindKey(r root) string {
	if r.group == "" {
		return r.version + "/" + r.kind
	}
	return r.group + "/" + r.version + "/" + r.kind
}

// diff walks the JSON of the skeleton before and after defaulting along the table.
func (g *gen) diff(typ string, before, after any) error {
	t := g.types[typ]
	if t == nil {
		return nil
	}
	bm, _ := before.(map[string]any)
	am, _ := after.(map[string]any)
	if am == nil {
		return nil
	}
	// The JSON fields, and the type each belongs to (an inline field's are its type's).
	fields := map[string]*Field{}
	owners := map[string]string{}
	var walk func(t *Type)
	walk = func(t *Type) {
		for _, f := range t.Fields {
			if f.Inline {
				walk(g.types[f.Type])
				continue
			}
			fields[f.Name], owners[f.Name] = f, t.Name
		}
	}
	walk(t)
	keys := make([]string, 0, len(am))
	for k := range am {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		av := am[k]
		f := fields[k]
		if f == nil {
			continue
		}
		bv, had := bm[k]
		key := owners[k] + "." + k
		if av == nil || reflect.DeepEqual(av, bv) {
			continue
		}
		if _, skip := derived[key]; skip {
			continue
		}
		if !had || bv == nil {
			if f.Kind == "message" && g.types[f.Type] != nil && g.types[f.Type].JSON == "" && !f.Repeated && f.MapKey == "" {
				// A struct the defaulting allocated: record it as {} and its fields below.
				if m, ok := av.(map[string]any); ok {
					f.Default = json.RawMessage(`{}`)
					g.produced(key)
					if err := g.diff(f.Type, map[string]any{}, m); err != nil {
						return err
					}
					continue
				}
			}
			b, _ := json.Marshal(av)
			if f.Default != nil && !bytes.Equal(f.Default, b) {
				return fmt.Errorf("%s: default %s here, %s elsewhere", key, b, f.Default)
			}
			f.Default = b
			g.produced(key)
			continue
		}
		if f.Kind == "message" && g.types[f.Type] != nil && g.types[f.Type].JSON == "" {
			switch {
			case f.Repeated:
				al, _ := av.([]any)
				bl, _ := bv.([]any)
				for i := range min(len(al), len(bl)) {
					if err := g.diff(f.Type, bl[i], al[i]); err != nil {
						return err
					}
				}
			case f.MapKey != "":
			default:
				if err := g.diff(f.Type, bv, av); err != nil {
					return err
				}
			}
			continue
		}
		b, _ := json.Marshal(av)
		f.Default = b
		g.produced(key)
	}
	return nil
}

func (g *gen) produced(key string) {
	if g.producedBy == nil {
		g.producedBy = map[string]map[string]bool{}
	}
	if g.producedBy[key] == nil {
		g.producedBy[key] = map[string]bool{}
	}
	g.producedBy[key][g.curKind] = true
}

// ---- output ----
