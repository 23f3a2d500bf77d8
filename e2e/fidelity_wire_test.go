package e2e

// Fidelity of what issue 13 added to apitest: protobuf bodies and responses, content
// negotiation (415, 406), PartialObjectMetadata and Table responses and watches, defaults,
// validation, subresources, discovery verbs, access reviews and field-selector errors.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/informerkit/informerkit/internal/kubeproto"
)

const (
	pbType      = "application/vnd.kubernetes.protobuf"
	acceptPB    = "application/vnd.kubernetes.protobuf, application/json"
	acceptMeta  = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	acceptMetaL = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	podPath     = "/api/v1/namespaces/{ns}/pods"
	depPath     = "/apis/apps/v1/namespaces/{ns}/deployments"
)

func podBody(name, spec string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

const simplePodSpec = `{"containers":[{"name":"c","image":"busybox:1.36"}]}`

// wireStep runs a step with the wire options of fstep.
func (st *runState) wireStep(step fstep, path, body, indent string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct := step.CT
	var rb []byte
	if body != "" {
		rb = []byte(body)
		if step.Proto {
			var m map[string]any
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				st.t.Fatalf("step %s: %v", step.Name, err)
			}
			b, err := kubeproto.EncodeObject(numbers(m))
			if err != nil {
				st.t.Fatalf("step %s: %v", step.Name, err)
			}
			rb, ct = b, pbType
		}
	}
	req := st.newRequest(ctx, step.Method, path, "", "")
	if rb != nil {
		req.Body = io.NopCloser(strings.NewReader(string(rb)))
		req.ContentLength = int64(len(rb))
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if step.Accept != "" {
		req.Header.Set("Accept", step.Accept)
	}
	resp, err := st.tg.client.Do(req)
	if err != nil {
		st.t.Fatalf("%s: %s %s: %v", st.tg.name, step.Method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	rct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(rct, pbType) {
		m, err := kubeproto.DecodeObject(b)
		if err != nil {
			b = []byte("undecodable protobuf: " + err.Error())
		} else {
			b, _ = json.Marshal(m)
		}
	}
	var sum string
	switch {
	case step.Discovery != nil:
		sum = discoverySummary(b, step.Discovery)
	case step.ShowAll:
		sum = st.fullObject(b)
	default:
		sum = st.summarize(b, step.Show)
		if step.ItemKinds {
			sum += " " + itemKinds(b)
		}
	}
	line := fmt.Sprintf("%sSTEP %s: %d %s", indent, step.Name, resp.StatusCode, sum)
	if step.ShowCT {
		line += " content-type=" + rct
	}
	if step.ShowWarn {
		line += fmt.Sprintf(" warnings=%q", resp.Header.Values("Warning"))
	}
	st.lines = append(st.lines, line)
	if step.Save != "" {
		var o struct {
			Metadata struct{ ResourceVersion, UID string } `json:"metadata"`
		}
		json.Unmarshal(b, &o)
		st.saved[step.Save] = [2]string{o.Metadata.ResourceVersion, o.Metadata.UID}
	}
}

// numbers turns encoding/json's float64s into json.Numbers (kubeproto's JSON form).
func numbers(v any) map[string]any {
	b, _ := json.Marshal(v)
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var m map[string]any
	d.Decode(&m)
	return m
}

var (
	ageRE  = regexp.MustCompile(`^[0-9]+[smhd]$`)
	timeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$`)
	ipRE   = regexp.MustCompile(`^10\.0\.0\.[0-9]+$`)
)

// fullObject renders a whole response object, normalised: uids, timestamps, ages and
// allocated cluster IPs become "set", resourceVersions labels, managedFields are dropped
// (server-side apply is compared elsewhere).
func (st *runState) fullObject(b []byte) string {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "non-JSON body: " + string(b)
	}
	if m["kind"] == "Status" {
		return st.statusLine(m)
	}
	var norm func(key string, v any) any
	norm = func(key string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "managedFields")
			for k, e := range x {
				x[k] = norm(k, e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = norm(key, e)
			}
			return x
		case string:
			switch {
			case key == "resourceVersion":
				return st.rvLabel(x)
			case key == "uid" || uidRE.MatchString(x) && len(x) == 36:
				return "set"
			case timeRE.MatchString(x), ageRE.MatchString(x), ipRE.MatchString(x):
				return "set"
			case key == "name" && strings.HasPrefix(x, st.ns):
				return strings.Replace(x, st.ns, "{ns}", 1)
			case key == "namespace" || key == "kubernetes.io/metadata.name":
				return strings.ReplaceAll(x, st.ns, "{ns}")
			}
		case float64:
			if key == "nodePort" {
				return "set" // allocated at random by the kube-apiserver
			}
		}
		return v
	}
	// A list's or Table's resourceVersion is the server's at the read, which any other write
	// to the cluster moves on (the kube-apiserver's own Leases among them): shown as set here;
	// the list-rv-and-exact scenario compares list versions.
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	listRV, isList := "", kind == "Table" || strings.HasSuffix(kind, "List")
	if rv, ok := md["resourceVersion"].(string); ok && isList {
		listRV = rv
		delete(md, "resourceVersion")
	}
	m = norm("", m).(map[string]any)
	if listRV != "" {
		md["resourceVersion"] = "set"
	}
	out, _ := json.Marshal(m)
	return string(out)
}

func itemKinds(b []byte) string {
	var l struct{ Items []map[string]any }
	json.Unmarshal(b, &l)
	var ks []string
	for _, it := range l.Items {
		ks = append(ks, fmt.Sprintf("%v/%v", it["apiVersion"], it["kind"]))
	}
	return "itemKinds=[" + strings.Join(ks, ",") + "]"
}

// discoverySummary renders the named resources of an APIResourceList: name, kind, group,
// version, namespaced, verbs, shortNames and categories.
func discoverySummary(b []byte, names []string) string {
	var l struct {
		Resources []map[string]any `json:"resources"`
	}
	json.Unmarshal(b, &l)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	for _, r := range l.Resources {
		n, _ := r["name"].(string)
		if !want[n] {
			continue
		}
		out = append(out, fmt.Sprintf("%s{kind=%v group=%v version=%v namespaced=%v verbs=%v short=%v categories=%v}",
			n, r["kind"], r["group"], r["version"], r["namespaced"], r["verbs"], r["shortNames"], r["categories"]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// readProtobufEvents reads length-delimited protobuf WatchEvents and sends each as the
// JSON event {"type":...,"object":...}.
func readProtobufEvents(ctx context.Context, r io.Reader, events chan<- []byte) {
	defer close(events)
	br := bufio.NewReader(r)
	for {
		var l [4]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint32(l[:]))
		if _, err := io.ReadFull(br, msg); err != nil {
			return
		}
		var raw []byte
		typ, obj, err := kubeproto.ParseWatchEvent(msg)
		if err == nil {
			var m map[string]any
			if m, err = kubeproto.DecodeObject(obj); err == nil {
				raw, _ = json.Marshal(map[string]any{"type": typ, "object": m})
			}
		}
		if err != nil {
			raw = []byte(`"undecodable protobuf event: ` + err.Error() + `"`)
		}
		select {
		case events <- raw:
		case <-ctx.Done():
			return
		}
	}
}

func init() {
	fidelityScenarios = append(fidelityScenarios,
		fscenario{Name: "protobuf-and-negotiation", Steps: []fstep{
			{Name: "create-pb", Method: "POST", Path: cmPath, Body: cmBody("pb", `,"labels":{"app":"x"}`), Proto: true, Accept: acceptPB, ShowCT: true, Save: "pb"},
			{Name: "get-pb", Method: "GET", Path: cmPath + "/pb", Accept: acceptPB, ShowCT: true},
			{Name: "get-json-q", Method: "GET", Path: cmPath + "/pb", Accept: "application/vnd.kubernetes.protobuf;q=0.5, application/json", ShowCT: true},
			{Name: "get-yaml", Method: "GET", Path: cmPath + "/pb", Accept: "application/yaml", ShowCT: true},
			{Name: "list-pb", Method: "GET", Path: cmPath, Accept: acceptPB, ShowCT: true, ItemKinds: true},
			{Name: "list-json", Method: "GET", Path: cmPath, Accept: "application/json", ItemKinds: true},
			{Name: "missing-pb", Method: "GET", Path: cmPath + "/missing", Accept: acceptPB, ShowCT: true},
			{Name: "update-pb", Method: "PUT", Path: cmPath + "/pb", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pb","resourceVersion":"{rv:pb}"},"data":{"k":"w"}}`, Proto: true, Accept: acceptPB, ShowCT: true},
			{Name: "delete-pb-options", Method: "DELETE", Path: cmPath + "/pb", Body: `{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["All"]}`, Proto: true, Accept: acceptPB, ShowCT: true},
			{Name: "unreadable-415", Method: "POST", Path: cmPath, Body: "hello", CT: "text/plain", Accept: "application/json"},
			{Name: "garbage-pb-400", Method: "POST", Path: cmPath, Body: "k8s\x00\x0a\x7f", CT: pbType, Accept: "application/json", ShowCT: true},
			{Name: "not-acceptable-406", Method: "GET", Path: cmPath, Accept: "text/html", ShowCT: true},
			{Name: "table-pb-406", Method: "GET", Path: cmPath, Accept: pbType + ";as=Table;g=meta.k8s.io;v=v1", ShowCT: true},
			{Name: "as-without-group", Method: "GET", Path: cmPath, Accept: "application/json;as=Table", ShowCT: true},
			{Name: "create-yaml", Method: "POST", Path: cmPath, Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  key: \"1\"\n", CT: "application/yaml", Accept: "application/json", ShowAll: true},
		}},
		fscenario{Name: "metadata-and-table", Steps: []fstep{
			{Name: "a", Method: "POST", Path: cmPath, Body: cmBody("a", `,"labels":{"app":"x"}`)},
			{Name: "b", Method: "POST", Path: cmPath, Body: cmBody("b", "")},
			{Name: "get-meta", Method: "GET", Path: cmPath + "/a", Accept: acceptMeta, ShowAll: true},
			{Name: "list-meta", Method: "GET", Path: cmPath, Accept: acceptMetaL, ShowAll: true},
			{Name: "list-meta-pb", Method: "GET", Path: cmPath, Accept: pbType + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", ShowCT: true, ShowAll: true},
			{Name: "list-as-single-406", Method: "GET", Path: cmPath, Accept: acceptMeta},
			{Name: "get-as-list-406", Method: "GET", Path: cmPath + "/a", Accept: acceptMetaL},
			{Name: "table", Method: "GET", Path: cmPath, Accept: acceptTable, ShowAll: true},
			{Name: "table-get", Method: "GET", Path: cmPath + "/a?includeObject=None", Accept: acceptTable, ShowAll: true},
			{Name: "table-bad-include", Method: "GET", Path: cmPath + "?includeObject=Everything", Accept: acceptTable},
			{Name: "watch-meta", Method: "GET", Path: cmPath + "?watch=true&resourceVersion=0&timeoutSeconds=5", Accept: acceptMeta, ShowCT: true, Watch: 2},
			{Name: "watch-meta-pb", Method: "GET", Path: cmPath + "?watch=true&resourceVersion=0&timeoutSeconds=5", Accept: pbType + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1", ShowCT: true, Watch: 2},
			{Name: "watch-pb", Method: "GET", Path: cmPath + "?watch=true&resourceVersion=0&timeoutSeconds=5", Accept: acceptPB, ShowCT: true, Watch: 2},
			{Name: "watch-table", Method: "GET", Path: cmPath + "?watch=true&resourceVersion=0&timeoutSeconds=5", Accept: acceptTable, ShowCT: true, Watch: 2},
		}},
		fscenario{Name: "table-columns", Steps: []fstep{
			{Name: "pod", Method: "POST", Path: podPath, Body: podBody("p", simplePodSpec)},
			{Name: "deployment", Method: "POST", Path: depPath, Body: deploymentBody},
			{Name: "secret", Method: "POST", Path: "/api/v1/namespaces/{ns}/secrets", Body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"b"}}`},
			{Name: "service", Method: "POST", Path: "/api/v1/namespaces/{ns}/services", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"selector":{"app":"d"},"ports":[{"port":80}]}}`},
			{Name: "pods", Method: "GET", Path: podPath + "?includeObject=None", Accept: acceptTable, ShowAll: true},
			{Name: "deployments", Method: "GET", Path: depPath + "?includeObject=None", Accept: acceptTable, ShowAll: true},
			{Name: "secrets", Method: "GET", Path: "/api/v1/namespaces/{ns}/secrets?includeObject=None", Accept: acceptTable, ShowAll: true},
			{Name: "services", Method: "GET", Path: "/api/v1/namespaces/{ns}/services?includeObject=None", Accept: acceptTable, ShowAll: true},
		}},
		fscenario{Name: "defaults", Steps: []fstep{
			{Name: "pod", Method: "POST", Path: podPath, Body: podBody("p", `{"containers":[{"name":"c","image":"busybox","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"500m","memory":"64Mi"}},`+
				`"readinessProbe":{"httpGet":{"port":80}}}],"volumes":[{"name":"v"},{"name":"cm","configMap":{"name":"x"}}]}`), ShowAll: true},
			{Name: "deployment", Method: "POST", Path: depPath, Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{` +
				`"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx:latest"}]}}}}`, ShowAll: true},
			{Name: "replicaset", Method: "POST", Path: "/apis/apps/v1/namespaces/{ns}/replicasets", Body: `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{` +
				`"selector":{"matchLabels":{"app":"r"}},"template":{"metadata":{"labels":{"app":"r"}},"spec":{"containers":[{"name":"c","image":"nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}}}}`, ShowAll: true},
			{Name: "service", Method: "POST", Path: "/api/v1/namespaces/{ns}/services", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"ports":[{"port":80,"name":"http"},{"port":81,"name":"x","targetPort":"web"}]}}`, ShowAll: true},
			{Name: "nodeport", Method: "POST", Path: "/api/v1/namespaces/{ns}/services", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":80}]}}`, ShowAll: true},
			{Name: "secret", Method: "POST", Path: "/api/v1/namespaces/{ns}/secrets", Body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"YQ=="}}`, ShowAll: true},
			{Name: "configmap", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, ShowAll: true},
			{Name: "namespace", Method: "POST", Path: "/api/v1/namespaces", Body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"{ns}-x"}}`, ShowAll: true},
			{Name: "namespace-delete", Method: "DELETE", Path: "/api/v1/namespaces/{ns}-x", ShowAll: true},
			{Name: "lease", Method: "POST", Path: "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", Body: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"me","leaseDurationSeconds":15}}`, ShowAll: true},
			{Name: "event", Method: "POST", Path: "/api/v1/namespaces/{ns}/events", Body: `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"R","message":"m","type":"Normal"}`, ShowAll: true},
			{Name: "podtemplate", Method: "POST", Path: ptPath, Body: ptBody("pt"), ShowAll: true},
		}},
		fscenario{Name: "decoding-and-validation", Steps: []fstep{
			{Name: "pod-no-containers", Method: "POST", Path: podPath, Body: podBody("e", `{}`)},
			{Name: "pod-no-image", Method: "POST", Path: podPath, Body: podBody("e", `{"containers":[{"name":"c"}]}`)},
			{Name: "pod-bad-container-name", Method: "POST", Path: podPath, Body: podBody("e", `{"containers":[{"name":"C","image":"x"}]}`)},
			{Name: "pod-duplicate-names", Method: "POST", Path: podPath, Body: podBody("e", `{"containers":[{"name":"c","image":"x"},{"name":"c","image":"y"}]}`)},
			{Name: "pod-port-zero", Method: "POST", Path: podPath, Body: podBody("e", `{"containers":[{"name":"c","image":"x","ports":[{"containerPort":0}]}]}`)},
			{Name: "deployment-no-selector", Method: "POST", Path: depPath, Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`},
			{Name: "deployment-mismatch", Method: "POST", Path: depPath, Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`},
			{Name: "deployment-restart-never", Method: "POST", Path: depPath, Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}}`},
			{Name: "service-no-ports", Method: "POST", Path: "/api/v1/namespaces/{ns}/services", Body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{}}`},
			{Name: "configmap-bad-key", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a b":"x"}}`},
			{Name: "wrong-type", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":1}}`},
			{Name: "unknown-field-warn", Method: "POST", Path: cmPath, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"colour":"red","data":{"k":"v"}}`, ShowWarn: true, ShowAll: true},
			{Name: "unknown-field-strict", Method: "POST", Path: cmPath + "?fieldValidation=Strict", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u2"},"spec":{"x":1}}`},
			{Name: "unknown-field-ignore", Method: "POST", Path: cmPath + "?fieldValidation=Ignore", Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u3"},"colour":"red"}`, ShowWarn: true},
			{Name: "bad-field-validation", Method: "POST", Path: cmPath + "?fieldValidation=Loose", Body: cmBody("u4", "")},
			{Name: "field-selector-pods", Method: "GET", Path: podPath + "?fieldSelector=spec.foo%3D1"},
			{Name: "field-selector-configmaps", Method: "GET", Path: cmPath + "?fieldSelector=data.x%3D1"},
			{Name: "field-selector-services", Method: "GET", Path: "/api/v1/namespaces/{ns}/services?fieldSelector=spec.type%3DClusterIP"},
		}},
		fscenario{Name: "subresources", Steps: []fstep{
			{Name: "deployment", Method: "POST", Path: depPath, Body: deploymentBody},
			{Name: "get-scale", Method: "GET", Path: depPath + "/d/scale", ShowAll: true},
			{Name: "put-scale", Method: "PUT", Path: depPath + "/d/scale", Body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":3}}`, ShowAll: true},
			{Name: "patch-scale", Method: "PATCH", CT: mergePatch, Path: depPath + "/d/scale", Body: `{"spec":{"replicas":4}}`, ShowAll: true},
			{Name: "scale-pb", Method: "GET", Path: depPath + "/d/scale", Accept: acceptPB, ShowCT: true, ShowAll: true},
			{Name: "negative-scale", Method: "PUT", Path: depPath + "/d/scale", Body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":-1}}`},
			{Name: "after-scale", Method: "GET", Path: depPath + "/d", Show: []string{"spec.replicas"}},
			{Name: "pod", Method: "POST", Path: podPath, Body: podBody("p", simplePodSpec)},
			{Name: "bind", Method: "POST", Path: podPath + "/p/binding", Body: `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}`, ShowAll: true},
			{Name: "bind-again", Method: "POST", Path: podPath + "/p/binding", Body: `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n2"}}`},
			{Name: "bound", Method: "GET", Path: podPath + "/p", Show: []string{"spec.nodeName", "status.conditions"}},
			{Name: "pod2", Method: "POST", Path: podPath, Body: podBody("q", simplePodSpec)},
			{Name: "evict", Method: "POST", Path: podPath + "/q/eviction", Body: `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"q"}}`, ShowAll: true},
			{Name: "evicted", Method: "GET", Path: podPath + "/q"},
			{Name: "evict-missing", Method: "POST", Path: podPath + "/nope/eviction", Body: `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"nope"}}`},
			{Name: "pods-scale", Method: "GET", Path: podPath + "/p/scale"},
			{Name: "access-review", Method: "POST", Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"{ns}","verb":"create","resource":"pods"}}}`, ShowAll: true},
			{Name: "namespaces-deletecollection", Method: "DELETE", Path: "/api/v1/namespaces"},
			{Name: "events-v1", Method: "POST", Path: "/apis/events.k8s.io/v1/namespaces/{ns}/events", Body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"c","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"kind":"Pod","name":"p"}}`, ShowAll: true},
		}},
		fscenario{Name: "discovery-verbs", Steps: []fstep{
			{Name: "core", Method: "GET", Path: "/api/v1", Discovery: []string{"namespaces", "namespaces/status", "namespaces/finalize", "pods", "pods/status", "pods/binding", "pods/eviction", "configmaps", "secrets", "services", "services/status", "events", "podtemplates", "bindings"}},
			{Name: "apps", Method: "GET", Path: "/apis/apps/v1", Discovery: []string{"deployments", "deployments/status", "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"}},
			{Name: "coordination", Method: "GET", Path: "/apis/coordination.k8s.io/v1", Discovery: []string{"leases"}},
			{Name: "events", Method: "GET", Path: "/apis/events.k8s.io/v1", Discovery: []string{"events"}},
			{Name: "authorization", Method: "GET", Path: "/apis/authorization.k8s.io/v1", Discovery: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
		}},
		fscenario{Name: "generation-on-delete", Steps: []fstep{
			{Name: "pod", Method: "POST", Path: podPath, Body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"f","finalizers":["example.com/hold"]},"spec":` + simplePodSpec + `}`},
			{Name: "delete", Method: "DELETE", Path: podPath + "/f"},
			{Name: "get", Method: "GET", Path: podPath + "/f", Show: []string{"metadata.deletionGracePeriodSeconds"}},
			{Name: "release", Method: "PATCH", CT: mergePatch, Path: podPath + "/f", Body: `{"metadata":{"finalizers":null}}`},
		}},
	)
}
