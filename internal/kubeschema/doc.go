// Package kubeschema is a table of the Kubernetes types that apitest serves: for each
// message type and each of its fields, the JSON name and JSON behaviour, the protobuf field
// number and wire type, the strategic-merge-patch and server-side-apply metadata, the
// server's defaults and the OpenAPI descriptions. It is data generated from the release
// pinned in e2e/tools/go.mod (k8s.io/api's struct tags, generated.proto, the OpenAPI v3
// documents and the kube-apiserver's defaulting functions) by e2e/tools/schemagen; this
// package imports nothing from k8s.io. `make schema` regenerates schema.json and
// `make schema-check` (run in CI) fails when it is not what its sources generate.
//
// Types are named as in OpenAPI: "io.k8s.api.core.v1.Pod",
// "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta". ForKind maps a group, version and
// kind ("apps", "v1", "Deployment") to the object and list types; Lookup takes a name.
//
//	pod := kubeschema.Lookup("io.k8s.api.core.v1.Pod")
//	spec := pod.Field("spec")             // Number 2, Wire Bytes, Kind Message, Type PodSpec
//	c := spec.Type().Field("containers")  // Repeated, PatchMergeKey "name", ListMapKeys [name]
//
// docs/kubeschema.md explains every column: the JSON behaviour of fields (Inline, Kind,
// Repeated, MapKey, Pointer, OmitEmpty), the protobuf encoding (field numbers, the types
// whose JSON form is not an object, the envelope and watch frames), the patch and apply
// metadata, and how the server defaults were found.
package kubeschema
