package e2e

// Fidelity of strategic merge patch and server-side apply: the same requests against
// apitest and the real kube-apiserver, comparing status codes, reasons, messages, causes,
// whole resulting objects and their managedFields (managers, operations, API versions,
// subresources and fieldsV1; times normalised).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/e2e/cluster"
)

const (
	smpType   = "application/strategic-merge-patch+json"
	applyType = "application/apply-patch+yaml"
	mgDeps    = "/apis/apps/v1/namespaces/{ns}/deployments"
	mgPods    = "/api/v1/namespaces/{ns}/pods"
	mgCMs     = "/api/v1/namespaces/{ns}/configmaps"
	mgSvcs    = "/api/v1/namespaces/{ns}/services"
	mgGroup   = "merge.fidelity.example.com"
	mgWidgets = "/apis/" + mgGroup + "/v1/namespaces/{ns}/widgets"
	mgNoSch   = "/apis/" + mgGroup + "/v1/namespaces/{ns}/gadgets"
)

func mgDeployment(name, containers string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","labels":{"app":"` + name + `"}},"spec":{"replicas":2,` +
		`"selector":{"matchLabels":{"app":"` + name + `"}},"template":{"metadata":{"labels":{"app":"` + name + `"}},"spec":{"containers":` + containers + `}}}}`
}

func mgConfigMap(name, data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":` + data + `}`
}

// mergeScenarios are the SMP and apply scenarios. Steps show the whole object (normalised)
// with its managedFields.
var mergeScenarios = []fscenario{
	{Name: "smp-containers", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgDeps, Body: mgDeployment("d", `[{"name":"a","image":"nginx:1","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]},{"name":"b","image":"busybox:1","command":["sleep","1d"]}]`)},
		{Name: "set-image", Method: "PATCH", CT: smpType, Path: mgDeps + "/d?fieldManager=kubectl-set", Body: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"image":"nginx:2","name":"a"}]}}}}`},
		{Name: "add-container", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"redis:7"}]}}}}`},
		{Name: "env-merge", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"20"},{"name":"Z","value":"3"}]}]}}}}`},
		{Name: "port-by-key", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":8080,"name":"alt"}]}]}}}}`},
		{Name: "delete-container", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"b","$patch":"delete"}]}}}}`},
		{Name: "delete-env", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"X","$patch":"delete"}]}]}}}}`},
		{Name: "order", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"}]}}}}`},
		{Name: "retain-keys", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`},
		{Name: "replace-list", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"nginx:3"},{"$patch":"replace"}]}}}}`},
		{Name: "label-null", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"metadata":{"labels":{"app":null,"tier":"web"}}}`},
		{Name: "replace-map", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"metadata":{"labels":{"$patch":"replace","only":"x"}}}`},
		{Name: "annotate", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"metadata":{"annotations":{"a":"1","b":"2"}}}`},
		{Name: "delete-map", Method: "PATCH", CT: smpType, Path: mgDeps + "/d", Body: `{"metadata":{"annotations":{"$patch":"delete"}}}`},
	}},
	{Name: "smp-volumes-ports", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgDeps, Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"v"},"spec":{"selector":{"matchLabels":{"app":"v"}},"template":{"metadata":{"labels":{"app":"v"}},` +
			`"spec":{"volumes":[{"name":"data","emptyDir":{}},{"name":"cfg","configMap":{"name":"c"}}],"containers":[{"name":"a","image":"nginx","volumeMounts":[{"name":"data","mountPath":"/data"}]}]}}}}`},
		{Name: "switch-volume-source", Method: "PATCH", CT: smpType, Path: mgDeps + "/v", Body: `{"spec":{"template":{"spec":{"volumes":[{"name":"data","$retainKeys":["name","secret"],"secret":{"secretName":"s"}}]}}}}`},
		{Name: "add-mount", Method: "PATCH", CT: smpType, Path: mgDeps + "/v", Body: `{"spec":{"template":{"spec":{"containers":[{"name":"a","volumeMounts":[{"name":"cfg","mountPath":"/cfg"}]}]}}}}`},
		{Name: "service", Method: "POST", Path: mgSvcs, Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"selector":{"app":"v"},"ports":[{"name":"http","port":80}]}}`},
		{Name: "add-port", Method: "PATCH", CT: smpType, Path: mgSvcs + "/s", Body: `{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}`},
		{Name: "change-port", Method: "PATCH", CT: smpType, Path: mgSvcs + "/s", Body: `{"spec":{"ports":[{"port":80,"targetPort":8080}]}}`},
		{Name: "delete-port", Method: "PATCH", CT: smpType, Path: mgSvcs + "/s", Body: `{"spec":{"ports":[{"port":443,"$patch":"delete"}]}}`},
	}},
	{Name: "smp-primitives", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgCMs, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p","finalizers":["a.io/x","b.io/y"]},"data":{"k":"v"}}`},
		{Name: "add-finalizer", Method: "PATCH", CT: smpType, Path: mgCMs + "/p", Body: `{"metadata":{"finalizers":["c.io/z","a.io/x"]}}`},
		{Name: "delete-finalizer", Method: "PATCH", CT: smpType, Path: mgCMs + "/p", Body: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b.io/y"]}}`},
		{Name: "order-finalizers", Method: "PATCH", CT: smpType, Path: mgCMs + "/p", Body: `{"metadata":{"$setElementOrder/finalizers":["c.io/z","a.io/x"]}}`},
		{Name: "clear", Method: "PATCH", CT: smpType, Path: mgCMs + "/p", Body: `{"metadata":{"finalizers":null}}`},
	}},
	{Name: "smp-errors", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgPods, Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e"},"spec":{"containers":[{"name":"a","image":"nginx"}]}}`},
		{Name: "bad-directive", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"containers":[{"name":"a","$patch":"frob"}]}}`},
		{Name: "no-merge-key", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"containers":[{"image":"x"}]}}`},
		{Name: "bad-retain-keys", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"metadata":{"$retainKeys":"x"}}`},
		{Name: "retain-keys-missing", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"metadata":{"$retainKeys":["name"],"labels":{"a":"b"}}}`},
		{Name: "bad-order", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"$setElementOrder/containers":"x"}}`},
		{Name: "not-json", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":`},
		{Name: "missing", Method: "PATCH", CT: smpType, Path: mgPods + "/nope", Body: `{"metadata":{"labels":{"a":"b"}}}`},
		{Name: "wrong-type", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"activeDeadlineSeconds":"x"}}`},
		{Name: "wrong-type-bool", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"hostNetwork":"yes"}}`},
		{Name: "wrong-type-string", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"nodeName":5}}`},
		{Name: "wrong-type-map", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"metadata":{"labels":"x"}}`},
		{Name: "wrong-type-struct", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"securityContext":[1]}}`},
		{Name: "wrong-type-list", Method: "PATCH", CT: smpType, Path: mgPods + "/e", Body: `{"spec":{"containers":{"a":1}}}`},
		{Name: "unknown-type", Method: "PATCH", CT: "application/x-frob", Path: mgPods + "/e", Body: `{}`},
	}},
	{Name: "smp-custom-resource", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgWidgets, Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}}`},
		{Name: "strategic", Method: "PATCH", CT: smpType, Path: mgWidgets + "/w", Body: `{"spec":{"size":2}}`},
		{Name: "unknown-type", Method: "PATCH", CT: "application/x-frob", Path: mgWidgets + "/w", Body: `{}`},
		{Name: "merge", Method: "PATCH", CT: mergePatch, Path: mgWidgets + "/w", Body: `{"spec":{"size":3}}`},
	}},
	{Name: "apply-configmap", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m1", Body: mgConfigMap("a", `{"x":"1","y":"2"}`)},
		{Name: "again", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m1", Body: mgConfigMap("a", `{"x":"1","y":"2"}`)},
		{Name: "same-values", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m0", Body: mgConfigMap("a", `{"x":"1"}`)},
		{Name: "same-values-gone", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m0", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
		{Name: "yaml", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m1", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    l: v\ndata:\n  x: \"1\"\n  w: \"2\"\n"},
		{Name: "conflict", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m2", Body: mgConfigMap("a", `{"x":"10","y":"2","z":"3"}`)},
		{Name: "share", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m2", Body: mgConfigMap("a", `{"y":"2","z":"3"}`)},
		{Name: "force", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m2&force=true", Body: mgConfigMap("a", `{"x":"10","y":"2","z":"3"}`)},
		{Name: "drop-owned", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m2", Body: mgConfigMap("a", `{"y":"2"}`)},
		{Name: "drop-shared", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m1", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"l":"v"}}}`},
		{Name: "merge-patch", Method: "PATCH", CT: mergePatch, Path: mgCMs + "/a?fieldManager=editor", Body: `{"data":{"e":"1"}}`},
		{Name: "conflict-update", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m1", Body: mgConfigMap("a", `{"e":"2"}`)},
		{Name: "put", Method: "PUT", Path: mgCMs + "/a?fieldManager=putter", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"l":"w"}},"data":{"y":"2","e":"1"}}`},
		{Name: "dry-run", Method: "PATCH", CT: applyType, Path: mgCMs + "/a?fieldManager=m3&dryRun=All", Body: mgConfigMap("a", `{"n":"1"}`)},
		{Name: "get", Method: "GET", Path: mgCMs + "/a"},
	}},
	{Name: "apply-errors", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: mgConfigMap("e", `{"x":"1"}`)},
		{Name: "no-manager", Method: "PATCH", CT: applyType, Path: mgCMs + "/e", Body: mgConfigMap("e", `{"x":"1"}`)},
		{Name: "force-merge", Method: "PATCH", CT: mergePatch, Path: mgCMs + "/e?force=true", Body: `{"data":{"x":"2"}}`},
		{Name: "wrong-version", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"e"}}`},
		{Name: "no-kind", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: `{"metadata":{"name":"e"}}`},
		{Name: "unknown-field", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"},"foo":1}`},
		{Name: "wrong-type", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: mgConfigMap("e", `{"x":1}`)},
		{Name: "managed-fields", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","managedFields":[]}}`},
		{Name: "name-mismatch", Method: "PATCH", CT: applyType, Path: mgCMs + "/other?fieldManager=m", Body: mgConfigMap("e", `{"x":"1"}`)},
		{Name: "bad-yaml", Method: "PATCH", CT: applyType, Path: mgCMs + "/e?fieldManager=m", Body: "a: [b"},
		{Name: "duplicate-key", Method: "PATCH", CT: applyType, Path: mgPods + "/p?fieldManager=m", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"},{"name":"c","image":"y"}]}}`},
		{Name: "status-missing", Method: "PATCH", CT: applyType, Path: mgPods + "/nope/status?fieldManager=m", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nope"},"status":{"phase":"Running"}}`},
	}},
	{Name: "apply-deployment", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=alice", Body: mgDeployment("d", `[{"name":"a","image":"nginx:1","ports":[{"containerPort":80}],"env":[{"name":"X","value":"1"}]}]`)},
		{Name: "bob-adds-container", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=bob", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:1"}]}}}}`},
		{Name: "bob-replicas-conflict", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=bob", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"side","image":"busybox:1"},{"name":"a","image":"nginx:9"}]}}}}`},
		{Name: "scale-by-patch", Method: "PATCH", CT: mergePatch, Path: mgDeps + "/d?fieldManager=scaler", Body: `{"spec":{"replicas":3}}`},
		{Name: "alice-reapplies", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=alice", Body: mgDeployment("d", `[{"name":"a","image":"nginx:1","ports":[{"containerPort":80}],"env":[{"name":"X","value":"1"}]}]`)},
		{Name: "alice-without-replicas", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=alice", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"d"}},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"a","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443}]}]}}}}`},
		{Name: "bob-drops-container", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=bob", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`},
		{Name: "status-apply", Method: "PATCH", CT: applyType, Path: mgDeps + "/d/status?fieldManager=ctrl", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"status":{"observedGeneration":1,"replicas":3}}`},
		{Name: "status-in-main", Method: "PATCH", CT: applyType, Path: mgDeps + "/d?fieldManager=alice", Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"d"}},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"a","image":"nginx:1"}]}}},"status":{"replicas":7}}`},
	}},
	{Name: "scale-managed-fields", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgDeps + "/s?fieldManager=alice", Body: mgDeployment("s", `[{"name":"a","image":"nginx:1"}]`)},
		{Name: "scale-patch", Method: "PATCH", CT: mergePatch, Path: mgDeps + "/s/scale?fieldManager=scaler", Body: `{"spec":{"replicas":4}}`},
		{Name: "get", Method: "GET", Path: mgDeps + "/s"},
		{Name: "alice-conflicts", Method: "PATCH", CT: applyType, Path: mgDeps + "/s?fieldManager=alice", Body: mgDeployment("s", `[{"name":"a","image":"nginx:1"}]`)},
		{Name: "scale-same", Method: "PATCH", CT: mergePatch, Path: mgDeps + "/s/scale?fieldManager=other", Body: `{"spec":{"replicas":4}}`},
		{Name: "get-after-same", Method: "GET", Path: mgDeps + "/s"},
		{Name: "scale-strategic", Method: "PATCH", CT: smpType, Path: mgDeps + "/s/scale", Body: `{"spec":{"replicas":5}}`},
		{Name: "get-after-strategic", Method: "GET", Path: mgDeps + "/s"},
		{Name: "scale-put", Method: "PUT", Path: mgDeps + "/s/scale?fieldManager=putter", Body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s"},"spec":{"replicas":1}}`},
		{Name: "get-after-put", Method: "GET", Path: mgDeps + "/s"},
	}},
	{Name: "status-updates", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgPods + "?fieldManager=creator", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s","labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`},
		// Labels unchanged and no podIP: the pod status strategy keeps metadata changes and
		// derives podIPs, which apitest's status updates do not (a documented difference).
		{Name: "put-status", Method: "PUT", Path: mgPods + "/s/status?fieldManager=kubelet", Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s","labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"nginx"}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`},
		{Name: "patch-status", Method: "PATCH", CT: smpType, Path: mgPods + "/s/status?fieldManager=kubelet", Body: `{"status":{"conditions":[{"type":"ContainersReady","status":"True"}]}}`},
		{Name: "merge-patch-status", Method: "PATCH", CT: mergePatch, Path: mgPods + "/s/status?fieldManager=other", Body: `{"status":{"message":"hi"}}`},
		{Name: "main-update-ignores-status", Method: "PATCH", CT: mergePatch, Path: mgPods + "/s?fieldManager=labeler", Body: `{"metadata":{"labels":{"b":"1"}},"status":{"phase":"Failed"}}`},
	}},
	{Name: "apply-service-ports", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgSvcs + "/s?fieldManager=m", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"selector":{"app":"s"},"ports":[{"name":"http","port":80},{"name":"dns","port":53,"protocol":"UDP"}]}}`},
		{Name: "other-port", Method: "PATCH", CT: applyType, Path: mgSvcs + "/s?fieldManager=n", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"name":"https","port":443}]}}`},
	}},
	{Name: "managed-fields-lifecycle", Steps: []fstep{
		{Name: "create", Method: "POST", Path: mgCMs + "?fieldManager=creator", Body: mgConfigMap("l", `{"a":"1"}`)},
		{Name: "reset", Method: "PUT", Path: mgCMs + "/l", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","managedFields":[{}]},"data":{"a":"1","b":"2"}}`},
		{Name: "untracked-update", Method: "PATCH", CT: mergePatch, Path: mgCMs + "/l?fieldManager=late", Body: `{"data":{"c":"3"}}`},
		{Name: "first-apply", Method: "PATCH", CT: applyType, Path: mgCMs + "/l?fieldManager=applier", Body: mgConfigMap("l", `{"a":"9"}`)},
		{Name: "set-managed", Method: "PUT", Path: mgCMs + "/l", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","managedFields":[{"manager":"someone","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"9","d":"4"}}`},
		{Name: "bad-managed", Method: "PUT", Path: mgCMs + "/l", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","managedFields":[{"manager":"x","operation":"Frob","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{}}]},"data":{"a":"9","d":"5"}}`},
	}},
	{Name: "apply-custom-resource", Steps: []fstep{
		{Name: "create", Method: "PATCH", CT: applyType, Path: mgWidgets + "/w?fieldManager=m1", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"items":[{"name":"a","v":"1"}],"tags":["x","y"],"labels":{"k":"v"}}}`},
		{Name: "second-manager", Method: "PATCH", CT: applyType, Path: mgWidgets + "/w?fieldManager=m2", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[{"name":"b","v":"2"}],"labels":{"j":"w"}}}`},
		{Name: "atomic-conflict", Method: "PATCH", CT: applyType, Path: mgWidgets + "/w?fieldManager=m2", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"tags":["z"]}}`},
		{Name: "drop-item", Method: "PATCH", CT: applyType, Path: mgWidgets + "/w?fieldManager=m1", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2}}`},
		{Name: "status", Method: "PATCH", CT: applyType, Path: mgWidgets + "/w/status?fieldManager=ctrl", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Widget","metadata":{"name":"w"},"status":{"ready":true,"list":[1,2]}}`},
		{Name: "no-schema", Method: "PATCH", CT: applyType, Path: mgNoSch + "/g?fieldManager=m1", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"a":{"b":1},"l":[1,2]}}`},
		{Name: "no-schema-2", Method: "PATCH", CT: applyType, Path: mgNoSch + "/g?fieldManager=m2", Body: `{"apiVersion":"` + mgGroup + `/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"a":{"c":2},"l":[3]}}`},
	}},
}

// widgetSchema is the schema of the scenarios' custom resource.
var widgetSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"size": map[string]any{"type": "integer"},
			"items": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
				"items": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name": map[string]any{"type": "string"}, "v": map[string]any{"type": "string"}}}},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		}},
		"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	},
}

var gadgetSchema = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}

// installMergeCRDs registers the scenarios' custom resources on the real server.
func installMergeCRDs(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	ac := acClient(t, c, nil)
	ctx := acCtx(t, 2*time.Minute)
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	for _, d := range []struct {
		kind, plural string
		schema       map[string]any
	}{{"Widget", "widgets", widgetSchema}, {"Gadget", "gadgets", gadgetSchema}} {
		name := d.plural + "." + mgGroup
		crd := &meta.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"group": mgGroup, "scope": "Namespaced",
				"names": map[string]any{"kind": d.kind, "plural": d.plural},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"subresources": map[string]any{"status": map[string]any{}},
					"schema":       map[string]any{"openAPIV3Schema": d.schema}}},
			},
		}}
		created, err := crds.Create(ctx, crd, apiclient.CreateOptions{})
		if meta.IsAlreadyExists(err) {
			if created, err = crds.Get(ctx, name, apiclient.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if crdEstablished(created) {
			continue
		}
		w, err := crds.Watch(ctx, apiclient.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: created.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		for established := false; !established; {
			ev := acRecv(t, w, 60*time.Second)
			established = ev.Type != apiclient.Error && crdEstablished(ev.Object)
		}
		w.Stop()
	}
	// The resources are served once discovery lists them.
	for {
		code, _ := (&runState{t: t, tg: &fidTarget{name: "kube-apiserver", url: c.URL, client: c.HTTPClient()}}).request("GET", "/apis/"+mgGroup+"/v1", "", "")
		if code == http.StatusOK {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/v1 not served", mgGroup)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestFidelityMerge runs mergeScenarios against the kube-apiserver and apitest.
func TestFidelityMerge(t *testing.T) {
	c := cluster.ForTest(t)
	installMergeCRDs(t, c)
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "fidelity", KubernetesVersion: c.Version})
	defer s.Close()
	for _, d := range []struct {
		kind, plural string
		schema       map[string]any
	}{{"Widget", "widgets", widgetSchema}, {"Gadget", "gadgets", gadgetSchema}} {
		if err := s.AddResource(apitest.ResourceType{Group: mgGroup, Version: "v1", Kind: d.kind, Plural: d.plural,
			Namespaced: true, StatusSubresource: true, OpenAPIV3Schema: d.schema}); err != nil {
			t.Fatal(err)
		}
	}
	sc := s.Client()
	defer sc.CloseIdleConnections()
	real := &fidTarget{name: "kube-apiserver", url: c.URL, client: c.HTTPClient()}
	fake := &fidTarget{name: "apitest", url: s.URL, client: sc}
	for _, scn := range mergeScenarios {
		t.Run(scn.Name, func(t *testing.T) {
			ns := "fid-" + scn.Name + "-" + fmt.Sprint(time.Now().UnixNano()%1e6)
			want := real.runMerge(t, ns, scn)
			got := fake.runMerge(t, ns, scn)
			compareTranscripts(t, scn.Name, want, got)
		})
	}
}

func (tg *fidTarget) runMerge(t *testing.T, ns string, scn fscenario) []string {
	t.Helper()
	st := &runState{t: t, tg: tg, ns: ns, rvs: map[string]string{}, lists: map[string]string{}, saved: map[string][2]string{}}
	if code, body := st.request("POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`, ""); code != http.StatusCreated {
		t.Fatalf("%s: creating namespace %s: %d %s", tg.name, ns, code, body)
	}
	for _, step := range scn.Steps {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req := st.newRequest(ctx, step.Method, st.subst(step.Path), st.subst(step.Body), step.CT)
		req.Header.Set("User-Agent", "fidelity/1.0")
		resp, err := tg.client.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s: %s %s: %v", tg.name, step.Method, step.Path, err)
		}
		var b []byte
		b, err = readAllClose(resp)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		st.lines = append(st.lines, fmt.Sprintf("STEP %s: %d %s", step.Name, resp.StatusCode, st.mergeObject(b)))
	}
	return st.lines
}

func readAllClose(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// mergeObject renders a response: a Status with its causes, or the whole object
// normalised (as fullObject) with its managedFields as "manager/operation/apiVersion
// [/subresource] time=set fields=<fieldsV1>" in order.
func (st *runState) mergeObject(b []byte) string {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "non-JSON body: " + string(b)
	}
	if m["kind"] == "Status" {
		line := st.statusLine(m)
		if d, ok := m["details"].(map[string]any); ok {
			if cs, ok := d["causes"].([]any); ok {
				var parts []string
				for _, c := range cs {
					cb, _ := json.Marshal(c)
					parts = append(parts, string(cb))
				}
				sort.Strings(parts)
				line += " causes=" + strings.Join(parts, ",")
			}
		}
		return line
	}
	md, _ := m["metadata"].(map[string]any)
	var managed []string
	if mf, ok := md["managedFields"].([]any); ok {
		for _, e := range mf {
			em, _ := e.(map[string]any)
			fields, _ := json.Marshal(em["fieldsV1"])
			s := fmt.Sprintf("%v/%v/%v", em["manager"], em["operation"], em["apiVersion"])
			if sub, ok := em["subresource"]; ok {
				s += fmt.Sprintf("/%v", sub)
			}
			if tm, ok := em["time"].(string); ok && timeRE.MatchString(tm) {
				s += " time=set"
			}
			managed = append(managed, s+" fields="+string(fields))
		}
	}
	// Entries sort by time (in seconds) before manager: their order depends on timing.
	sort.Strings(managed)
	b2, _ := json.Marshal(m)
	return st.fullObject(b2) + "\n    MANAGED " + strings.Join(managed, "\n    MANAGED ")
}
