package e2e

// The fidelity scenarios: the same requests, as data, run against apitest and against the
// real kube-apiserver (fidelity_test.go). Paths and bodies may use {ns} (the scenario's
// namespace), {rv:NAME} and {uid:NAME} (the resourceVersion and uid saved from an earlier
// response with Save: NAME), and {cont} (the continue token of the last list).

import "time"

const (
	mergePatch = "application/merge-patch+json"
	jsonPatch  = "application/json-patch+json"
)

var cmPath = "/api/v1/namespaces/{ns}/configmaps"
var ptPath = "/api/v1/namespaces/{ns}/podtemplates"

func cmBody(name, extra string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"` + extra + `},"data":{"k":"v"}}`
}

func ptBody(name string) string {
	return `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"` + name + `"},"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}`
}

var fidelityScenarios = []fscenario{
	{Name: "create-get-update-delete", Steps: []fstep{
		{Name: "create", Method: "POST", Path: cmPath, Body: cmBody("a", `,"labels":{"app":"x"}`), Save: "a"},
		{Name: "get", Method: "GET", Path: cmPath + "/a"},
		{Name: "create-again", Method: "POST", Path: cmPath, Body: cmBody("a", "")},
		{Name: "update", Method: "PUT", Path: cmPath + "/a", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"{rv:a}"},"data":{"k":"w"}}`, Save: "a2"},
		{Name: "update-stale", Method: "PUT", Path: cmPath + "/a", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"{rv:a}"},"data":{"k":"z"}}`},
		{Name: "update-noop", Method: "PUT", Path: cmPath + "/a", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"{rv:a2}"},"data":{"k":"w"}}`},
		{Name: "update-name-mismatch", Method: "PUT", Path: cmPath + "/a", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`},
		{Name: "update-missing", Method: "PUT", Path: cmPath + "/missing", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"missing"}}`},
		{Name: "delete", Method: "DELETE", Path: cmPath + "/a"},
		{Name: "get-deleted", Method: "GET", Path: cmPath + "/a"},
		{Name: "delete-missing", Method: "DELETE", Path: cmPath + "/a"},
	}},
	{Name: "create-validation", Steps: []fstep{
		{Name: "no-name", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`},
		{Name: "bad-name", Method: "POST", Path: cmPath, Body: cmBody("Bad_Name", "")},
		{Name: "generate-name", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}`, Show: []string{"generated"}},
		{Name: "with-rv", Method: "POST", Path: cmPath, Body: cmBody("withrv", `,"resourceVersion":"5"`)},
		{Name: "namespace-mismatch", Method: "POST", Path: cmPath, Body: cmBody("x", `,"namespace":"other"`)},
		{Name: "missing-namespace", Method: "POST", Path: "/api/v1/namespaces/{ns}-missing/configmaps", Body: cmBody("x", "")},
		{Name: "unknown-resource", Method: "GET", Path: "/api/v1/namespaces/{ns}/nosuchthings"},
	}},
	{Name: "patch", Steps: []fstep{
		{Name: "create", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p","labels":{"a":"1"}},"data":{"x":"1","y":"2"}}`, Save: "p"},
		{Name: "merge", Method: "PATCH", CT: mergePatch, Path: cmPath + "/p", Body: `{"data":{"x":null,"z":"3"},"metadata":{"labels":{"b":"2"}}}`},
		{Name: "json", Method: "PATCH", CT: jsonPatch, Path: cmPath + "/p", Body: `[{"op":"replace","path":"/data/y","value":"20"},{"op":"remove","path":"/data/z"}]`},
		{Name: "stale-rv", Method: "PATCH", CT: mergePatch, Path: cmPath + "/p", Body: `{"metadata":{"resourceVersion":"{rv:p}"},"data":{"q":"1"}}`},
		{Name: "missing", Method: "PATCH", CT: mergePatch, Path: cmPath + "/nope", Body: `{"data":{"q":"1"}}`},
	}},
	{Name: "list-paging", Steps: []fstep{
		{Name: "c1", Method: "POST", Path: cmPath, Body: cmBody("c1", "")},
		{Name: "c2", Method: "POST", Path: cmPath, Body: cmBody("c2", "")},
		{Name: "c3", Method: "POST", Path: cmPath, Body: cmBody("c3", "")},
		{Name: "c4", Method: "POST", Path: cmPath, Body: cmBody("c4", "")},
		{Name: "c5", Method: "POST", Path: cmPath, Body: cmBody("c5", "")},
		{Name: "page1", Method: "GET", Path: cmPath + "?limit=2"},
		{Name: "c6-between-pages", Method: "POST", Path: cmPath, Body: cmBody("c6", "")},
		{Name: "page2", Method: "GET", Path: cmPath + "?limit=2&continue={cont}"},
		{Name: "page3", Method: "GET", Path: cmPath + "?limit=2&continue={cont}"},
		{Name: "full", Method: "GET", Path: cmPath},
		{Name: "bad-continue", Method: "GET", Path: cmPath + "?limit=2&continue=garbage"},
		{Name: "continue-with-rv", Method: "GET", Path: cmPath + "?limit=2&resourceVersion=5&continue=x"},
		{Name: "match-without-rv", Method: "GET", Path: cmPath + "?resourceVersionMatch=Exact"},
		{Name: "too-large-rv", Method: "GET", Path: cmPath + "?resourceVersion=99999999&resourceVersionMatch=NotOlderThan"},
	}},
	{Name: "expired-continue", Steps: []fstep{
		{Name: "p1", Method: "POST", Path: ptPath, Body: ptBody("p1")},
		{Name: "p2", Method: "POST", Path: ptPath, Body: ptBody("p2")},
		{Name: "p3", Method: "POST", Path: ptPath, Body: ptBody("p3")},
		{Name: "page1", Method: "GET", Path: ptPath + "?limit=1"},
		{Name: "p4", Method: "POST", Path: ptPath, Body: ptBody("p4")},
		{Name: "page2-after-compaction", Compact: true, Method: "GET", Path: ptPath + "?limit=1&continue={cont}"},
	}},
	{Name: "selectors", Steps: []fstep{
		{Name: "prod", Method: "POST", Path: cmPath, Body: cmBody("s-prod", `,"labels":{"env":"prod","n":"1"}`)},
		{Name: "dev", Method: "POST", Path: cmPath, Body: cmBody("s-dev", `,"labels":{"env":"dev","n":"2"}`)},
		{Name: "none", Method: "POST", Path: cmPath, Body: cmBody("s-none", `,"labels":{"n":"3"}`)},
		{Name: "eq", Method: "GET", Path: cmPath + "?labelSelector=env%3Dprod"},
		{Name: "neq", Method: "GET", Path: cmPath + "?labelSelector=env!%3Dprod"},
		{Name: "in", Method: "GET", Path: cmPath + "?labelSelector=env+in+(dev,test)"},
		{Name: "notin", Method: "GET", Path: cmPath + "?labelSelector=env+notin+(dev)"},
		{Name: "exists", Method: "GET", Path: cmPath + "?labelSelector=env"},
		{Name: "not-exists", Method: "GET", Path: cmPath + "?labelSelector=!env"},
		{Name: "gt", Method: "GET", Path: cmPath + "?labelSelector=n%3E1"},
		{Name: "bad-selector", Method: "GET", Path: cmPath + "?labelSelector=env+in+(a"},
		{Name: "field-name", Method: "GET", Path: cmPath + "?fieldSelector=metadata.name%3Ds-dev"},
		{Name: "field-neq", Method: "GET", Path: cmPath + "?fieldSelector=metadata.name!%3Ds-dev,metadata.namespace%3D%3D{ns}"},
		{Name: "field-unsupported", Method: "GET", Path: cmPath + "?fieldSelector=spec.foo%3Dbar"},
		{Name: "paged-selector", Method: "GET", Path: cmPath + "?labelSelector=n&limit=2"},
	}},
	{Name: "watch-from-rv", Steps: []fstep{
		{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", ""), Save: "a"},
		{Name: "watch", Method: "GET", Path: cmPath + "?watch=1&resourceVersion={rv:a}", Watch: 3, During: []fstep{
			{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", "")},
			{Name: "patch-a", Method: "PATCH", CT: mergePatch, Path: cmPath + "/a", Body: `{"data":{"k":"2"}}`},
			{Name: "delete-b", Method: "DELETE", Path: cmPath + "/b"},
		}},
	}},
	{Name: "watch-initial-state", Steps: []fstep{
		{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", "")},
		{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", ""), Save: "a"},
		// A watch at resourceVersion 0 starts from the kube-apiserver's watch cache as it is,
		// which may not hold a yet (a then comes as an event after b, not in key order); a
		// list not older than a's write waits until the cache has it.
		{Name: "a-in-cache", Method: "GET", Path: cmPath + "?resourceVersion={rv:a}&resourceVersionMatch=NotOlderThan"},
		{Name: "watch-rv0", Method: "GET", Path: cmPath + "?watch=1&resourceVersion=0", Watch: 3, During: []fstep{
			{Name: "c", Method: "POST", Path: cmPath, Body: cmBody("c", "")},
		}},
		{Name: "watch-rv-empty", Method: "GET", Path: cmPath + "?watch=1", Watch: 3},
	}},
	{Name: "watch-send-initial-events", Steps: []fstep{
		{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", "")},
		{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", "")},
		{Name: "watchlist", Method: "GET", Path: cmPath + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", Watch: 4, During: []fstep{
			{Name: "c", Method: "POST", Path: cmPath, Body: cmBody("c", "")},
		}},
		{Name: "without-match", Method: "GET", Path: cmPath + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true", Watch: 1},
		{Name: "match-without-sie", Method: "GET", Path: cmPath + "?watch=1&resourceVersionMatch=NotOlderThan", Watch: 1},
	}},
	// A quiet watch gets no bookmark (nothing newer to confirm) and ends cleanly at its
	// timeout; a watch whose selector hides an event gets a bookmark 2 s before its timeout.
	{Name: "watch-timeout-bookmark", Steps: []fstep{
		{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", ""), Save: "a"},
		{Name: "quiet", Method: "GET", Path: cmPath + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={rv:a}", Watch: -1, ExpectClose: true, Timeout: 15 * time.Second},
		{Name: "filtered", Method: "GET", Path: cmPath + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&labelSelector=x%3Dy&resourceVersion={rv:a}", Watch: 1, ExpectClose: true, Timeout: 15 * time.Second, During: []fstep{
			{Name: "hidden", Method: "POST", Path: cmPath, Body: cmBody("hidden", "")},
		}},
	}},
	{Name: "watch-expired", Steps: []fstep{
		{Name: "p", Method: "POST", Path: ptPath, Body: ptBody("p"), Save: "p"},
		{Name: "patch", Method: "PATCH", CT: mergePatch, Path: ptPath + "/p", Body: `{"metadata":{"labels":{"x":"y"}}}`},
		{Name: "watch-compacted", Compact: true, Method: "GET", Path: ptPath + "?watch=1&resourceVersion={rv:p}", Watch: 1, ExpectClose: true},
	}},
	{Name: "watch-selector-transitions", Steps: []fstep{
		{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", `,"labels":{"app":"web"}`), Save: "a"},
		{Name: "watch", Method: "GET", Path: cmPath + "?watch=1&labelSelector=app%3Dweb&resourceVersion={rv:a}", Watch: 3, During: []fstep{
			{Name: "other", Method: "POST", Path: cmPath, Body: cmBody("o", `,"labels":{"app":"db"}`)},
			{Name: "a-leaves", Method: "PATCH", CT: mergePatch, Path: cmPath + "/a", Body: `{"metadata":{"labels":{"app":"db"}}}`},
			{Name: "o-joins", Method: "PATCH", CT: mergePatch, Path: cmPath + "/o", Body: `{"metadata":{"labels":{"app":"web"}}}`},
			{Name: "o-stays", Method: "PATCH", CT: mergePatch, Path: cmPath + "/o", Body: `{"data":{"k":"2"}}`},
		}},
	}},
	{Name: "delete-with-finalizers", Steps: []fstep{
		{Name: "create", Method: "POST", Path: cmPath, Body: cmBody("f", `,"finalizers":["example.com/hold"]`), Save: "f"},
		{Name: "watch", Method: "GET", Path: cmPath + "?watch=1&resourceVersion={rv:f}", Watch: 2, During: []fstep{
			{Name: "delete-wrong-uid", Method: "DELETE", Path: cmPath + "/f", Body: `{"preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`},
			{Name: "delete-stale-rv", Method: "DELETE", Path: cmPath + "/f", Body: `{"preconditions":{"resourceVersion":"1"}}`},
			{Name: "delete", Method: "DELETE", Path: cmPath + "/f", Body: `{"preconditions":{"uid":"{uid:f}"}}`},
			{Name: "delete-again", Method: "DELETE", Path: cmPath + "/f"},
			{Name: "add-finalizer", Method: "PATCH", CT: jsonPatch, Path: cmPath + "/f", Body: `[{"op":"add","path":"/metadata/finalizers/-","value":"another"}]`},
			{Name: "clear-finalizers", Method: "PATCH", CT: mergePatch, Path: cmPath + "/f", Body: `{"metadata":{"finalizers":null}}`},
			{Name: "get-gone", Method: "GET", Path: cmPath + "/f"},
		}},
	}},
	// What a DELETE's propagation does on the server side (the garbage collector is
	// kube-controller-manager's, not running here): the orphan and foregroundDeletion
	// finalizers, switched by a later DELETE, dropped by Background.
	{Name: "delete-propagation", Steps: []fstep{
		{Name: "create", Method: "POST", Path: cmPath, Body: cmBody("p", "")},
		{Name: "foreground", Method: "DELETE", Path: cmPath + "/p", Body: `{"propagationPolicy":"Foreground"}`},
		{Name: "get-foreground", Method: "GET", Path: cmPath + "/p"},
		{Name: "orphan", Method: "DELETE", Path: cmPath + "/p?propagationPolicy=Orphan"},
		{Name: "get-orphan", Method: "GET", Path: cmPath + "/p"},
		{Name: "background", Method: "DELETE", Path: cmPath + "/p", Body: `{"propagationPolicy":"Background"}`},
		{Name: "get-background", Method: "GET", Path: cmPath + "/p"},
		{Name: "create-held", Method: "POST", Path: cmPath, Body: cmBody("h", `,"finalizers":["example.com/hold"]`)},
		{Name: "orphan-dependents", Method: "DELETE", Path: cmPath + "/h", Body: `{"orphanDependents":true}`},
		{Name: "get-orphan-dependents", Method: "GET", Path: cmPath + "/h"},
		{Name: "background-held", Method: "DELETE", Path: cmPath + "/h?propagationPolicy=Background"},
		{Name: "get-background-held", Method: "GET", Path: cmPath + "/h"},
		{Name: "both-set", Method: "DELETE", Path: cmPath + "/h", Body: `{"propagationPolicy":"Orphan","orphanDependents":true}`},
		{Name: "bad-policy", Method: "DELETE", Path: cmPath + "/missing", Body: `{"propagationPolicy":"Sideways"}`},
		{Name: "deployment", Method: "POST", Path: "/apis/apps/v1/namespaces/{ns}/deployments", Body: deploymentBody},
		{Name: "deployment-foreground", Method: "DELETE", Path: "/apis/apps/v1/namespaces/{ns}/deployments/d", Body: `{"propagationPolicy":"Foreground"}`},
		{Name: "get-deployment", Method: "GET", Path: "/apis/apps/v1/namespaces/{ns}/deployments/d"},
	}},
	{Name: "status-and-generation", Steps: []fstep{
		{Name: "create", Method: "POST", Path: "/apis/apps/v1/namespaces/{ns}/deployments", Body: deploymentBody, Show: []string{"spec.replicas"}},
		{Name: "scale", Method: "PATCH", CT: mergePatch, Path: "/apis/apps/v1/namespaces/{ns}/deployments/d", Body: `{"spec":{"replicas":3}}`, Show: []string{"spec.replicas"}},
		{Name: "label", Method: "PATCH", CT: mergePatch, Path: "/apis/apps/v1/namespaces/{ns}/deployments/d", Body: `{"metadata":{"labels":{"x":"y"}}}`},
		{Name: "status-via-main", Method: "PATCH", CT: mergePatch, Path: "/apis/apps/v1/namespaces/{ns}/deployments/d", Body: `{"status":{"observedGeneration":7}}`, Show: []string{"status.observedGeneration"}},
		{Name: "status", Method: "PATCH", CT: mergePatch, Path: "/apis/apps/v1/namespaces/{ns}/deployments/d/status", Body: `{"status":{"observedGeneration":2}}`, Show: []string{"status.observedGeneration", "spec.replicas"}},
		{Name: "spec-via-status", Method: "PATCH", CT: mergePatch, Path: "/apis/apps/v1/namespaces/{ns}/deployments/d/status", Body: `{"spec":{"replicas":9}}`, Show: []string{"spec.replicas"}},
	}},
}

func init() {
	fidelityScenarios = append(fidelityScenarios,
		fscenario{Name: "list-rv0-and-exact", Steps: []fstep{
			{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", ""), Save: "a"},
			{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", "")},
			{Name: "c", Method: "POST", Path: cmPath, Body: cmBody("c", ""), Save: "c"},
			// A list at resourceVersion 0 is served from the kube-apiserver's watch cache as it
			// is, which may not hold c yet (it answered [a,b] once in CI); a list not older than
			// c's write waits until the cache has it.
			{Name: "c-in-cache", Method: "GET", Path: cmPath + "?resourceVersion={rv:c}&resourceVersionMatch=NotOlderThan"},
			{Name: "rv0-limit", Method: "GET", Path: cmPath + "?resourceVersion=0&limit=2"},
			{Name: "patch-a", Method: "PATCH", CT: mergePatch, Path: cmPath + "/a", Body: `{"data":{"k":"new"}}`, Save: "patched"},
			// not-older-than and get-rv0 read the watch cache: first wait until it holds the
			// patch (a list not older than a's write answered before the patch once in CI).
			{Name: "patch-in-cache", Method: "GET", Path: cmPath + "?resourceVersion={rv:patched}&resourceVersionMatch=NotOlderThan"},
			{Name: "exact-old", Method: "GET", Path: cmPath + "?resourceVersion={rv:a}&resourceVersionMatch=Exact", Show: nil},
			{Name: "not-older-than", Method: "GET", Path: cmPath + "?resourceVersion={rv:a}&resourceVersionMatch=NotOlderThan"},
			{Name: "exact-zero", Method: "GET", Path: cmPath + "?resourceVersion=0&resourceVersionMatch=Exact"},
			{Name: "get-rv0", Method: "GET", Path: cmPath + "/a?resourceVersion=0"},
		}},
		fscenario{Name: "deletecollection", Steps: []fstep{
			{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", `,"labels":{"gone":"yes"}`)},
			{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", `,"labels":{"gone":"yes"}`)},
			{Name: "c", Method: "POST", Path: cmPath, Body: cmBody("c", "")},
			{Name: "delete", Method: "DELETE", Path: cmPath + "?labelSelector=gone%3Dyes"},
			{Name: "left", Method: "GET", Path: cmPath},
		}},
		fscenario{Name: "create-on-update", Steps: []fstep{
			{Name: "lease", Method: "PUT", Path: "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/l", Body: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`, Show: []string{"spec.holderIdentity"}},
			{Name: "configmap", Method: "PUT", Path: cmPath + "/nope", Body: cmBody("nope", "")},
		}},
	)
}

const deploymentBody = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,` +
	`"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},` +
	`"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`
