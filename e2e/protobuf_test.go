package e2e

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/meta"
)

// Protobuf on the real kube-apiserver: apiclient reads built-in kinds as protobuf by default,
// and every read gives what the same read over JSON gives.

// pbPod declares pod fields of every shape: maps, lists, pointers, timestamps, quantities,
// int-or-strings.
type pbPod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Containers []struct {
			Name           string            `json:"name"`
			Image          string            `json:"image"`
			Env            []map[string]any  `json:"env"`
			Resources      map[string]any    `json:"resources"`
			ReadinessProbe map[string]any    `json:"readinessProbe"`
			Unknown        map[string]string `json:"unknownField"`
		} `json:"containers"`
		Priority                      *int32 `json:"priority"`
		TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
		EnableServiceLinks            *bool  `json:"enableServiceLinks"`
		DNSPolicy                     string `json:"dnsPolicy"`
		SchedulerName                 string `json:"schedulerName"`
		Tolerations                   []any  `json:"tolerations"`
	} `json:"spec"`
	Status struct {
		Phase    string `json:"phase"`
		QOSClass string `json:"qosClass"`
	} `json:"status"`
}

var pbPods = meta.GroupVersionResource{Version: "v1", Resource: "pods"}

func pbPodFor(name string) *pbPod {
	p := &pbPod{}
	p.APIVersion, p.Kind, p.Name = "v1", "Pod", name
	p.Labels = map[string]string{"app": "e2e"}
	p.Spec.Containers = append(p.Spec.Containers, struct {
		Name           string            `json:"name"`
		Image          string            `json:"image"`
		Env            []map[string]any  `json:"env"`
		Resources      map[string]any    `json:"resources"`
		ReadinessProbe map[string]any    `json:"readinessProbe"`
		Unknown        map[string]string `json:"unknownField"`
	}{Name: "c", Image: "registry.k8s.io/pause:3.10",
		Env:            []map[string]any{{"name": "E", "value": "v"}},
		Resources:      map[string]any{"requests": map[string]any{"cpu": "0.5", "memory": "64Mi"}},
		ReadinessProbe: map[string]any{"httpGet": map[string]any{"port": 8080, "path": "/"}, "periodSeconds": 3}})
	return p
}

// mediaLog records the media type of every answer that passes through the HTTP transport.
type mediaLog struct {
	mu   sync.Mutex
	base http.RoundTripper
	seen []string
}

func (m *mediaLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := m.base.RoundTrip(r)
	if err == nil {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		m.mu.Lock()
		m.seen = append(m.seen, mt)
		m.mu.Unlock()
	}
	return resp, err
}

func (m *mediaLog) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.seen
	m.seen = nil
	return out
}

// pbClients returns a client reading protobuf (the default) over proto, with its media
// log, and one reading JSON.
func pbClients(t *testing.T, c *cluster.Cluster, proto apiclient.WatchProtocol) (pb, js *apiclient.Client, log *mediaLog) {
	log = &mediaLog{}
	pb = acClient(t, c, func(cfg *apiclient.Config) {
		cfg.WatchProtocol = proto
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { log.base = rt; return log }
	})
	js = acClient(t, c, func(cfg *apiclient.Config) { cfg.DisableProtobuf = true })
	return pb, js, log
}

// sameObjects compares what the two paths decoded; managedFields are compared as JSON
// values (the protobuf path writes their JSON anew, with sorted keys).
func sameObjects(t *testing.T, what string, a, b *pbPod) {
	t.Helper()
	var ma, mb any
	if err := json.Unmarshal(a.ManagedFields, &ma); err != nil {
		t.Fatalf("%s: protobuf managedFields %q: %v", what, a.ManagedFields, err)
	}
	if err := json.Unmarshal(b.ManagedFields, &mb); err != nil {
		t.Fatalf("%s: JSON managedFields: %v", what, err)
	}
	ac, bc := *a, *b
	ac.ManagedFields, bc.ManagedFields = nil, nil
	if !reflect.DeepEqual(ma, mb) || !reflect.DeepEqual(ac, bc) {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		t.Fatalf("%s: protobuf and JSON differ:\nprotobuf %s\nJSON     %s", what, x, y)
	}
}

func onlyProtobuf(t *testing.T, what string, seen []string) {
	t.Helper()
	if len(seen) == 0 {
		t.Fatalf("%s: no answer", what)
	}
	for _, mt := range seen {
		if mt != "application/vnd.kubernetes.protobuf" {
			t.Fatalf("%s: answers %v", what, seen)
		}
	}
}

func TestAPIClientProtobufAgreesWithJSON(t *testing.T) {
	c := cluster.ForTest(t)
	for _, tr := range []struct {
		name  string
		proto apiclient.WatchProtocol
	}{{"http2", apiclient.WatchChunked}, {"websocket", apiclient.WatchWebSocket}} {
		t.Run(tr.name, func(t *testing.T) {
			pb, js, log := pbClients(t, c, tr.proto)
			ctx := acCtx(t, 3*time.Minute)
			ns := acNamespace(t, js)
			pr := apiclient.NewResource[*pbPod](pb, pbPods).Namespace(ns)
			jr := apiclient.NewResource[*pbPod](js, pbPods).Namespace(ns)
			for i := range 5 {
				if _, err := jr.Create(ctx, pbPodFor(fmt.Sprintf("p%d", i)), apiclient.CreateOptions{FieldManager: "e2e"}); err != nil {
					t.Fatal(err)
				}
			}
			a, err := pr.Get(ctx, "p1", apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := jr.Get(ctx, "p1", apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameObjects(t, "Get", a, b)
			if a.Kind != "Pod" || a.Status.QOSClass != "Burstable" || *a.Spec.TerminationGracePeriodSeconds != 30 || len(a.ManagedFields) == 0 {
				t.Fatalf("Get: %+v", a)
			}
			onlyProtobuf(t, "Get", log.take())
			for _, opts := range []apiclient.ListOptions{{}, {Limit: 2}} {
				for {
					la, err := pr.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					var each []*pbPod
					lm, err := pr.ListEach(ctx, opts, func(p *pbPod) error { each = append(each, p); return nil })
					if err != nil {
						t.Fatal(err)
					}
					lb, err := jr.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					if len(la.Items) != len(lb.Items) || len(each) != len(lb.Items) || la.Kind != lb.Kind || la.APIVersion != lb.APIVersion {
						t.Fatalf("List %+v: %d / %d / %d items", opts, len(la.Items), len(each), len(lb.Items))
					}
					for i := range lb.Items {
						sameObjects(t, "List", la.Items[i], lb.Items[i])
						sameObjects(t, "ListEach", each[i], lb.Items[i])
					}
					if lm.Continue == "" {
						break
					}
					opts.Continue = lm.Continue
				}
			}
			onlyProtobuf(t, "List, ListEach", log.take())
			pbWatchAgrees(t, pr, jr)
			// Errors: the same *meta.Status from protobuf as from JSON.
			_, ea := pr.Get(ctx, "missing", apiclient.GetOptions{})
			_, eb := jr.Get(ctx, "missing", apiclient.GetOptions{})
			sa, oka := meta.AsStatus(ea)
			sb, okb := meta.AsStatus(eb)
			if !oka || !okb || !meta.IsNotFound(ea) || !reflect.DeepEqual(sa, sb) {
				t.Fatalf("404: protobuf %+v, JSON %+v", ea, eb)
			}
			onlyProtobuf(t, "404", log.take())
		})
	}
}

// pbWatchAgrees watches from a resourceVersion and as a streaming list with both
// resources and compares the events.
func pbWatchAgrees(t *testing.T, pr, jr *apiclient.Resource[*pbPod]) {
	ctx := acCtx(t, 2*time.Minute)
	l, err := jr.List(ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	send := true
	for round, opts := range []apiclient.ListOptions{
		{ResourceVersion: l.ResourceVersion},
		{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan},
	} {
		wa, err := pr.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := jr.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("p%d", round)
		if _, err := jr.Patch(ctx, name, apiclient.MergePatchType, []byte(`{"metadata":{"labels":{"round":"`+strconv.Itoa(round)+`"}}}`), apiclient.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := jr.Delete(ctx, name, apiclient.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			ea, eb := acRecv(t, wa, time.Minute), acRecv(t, wb, time.Minute)
			for ea.Type == apiclient.Bookmark && ea.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "" {
				ea = acRecv(t, wa, time.Minute)
			}
			for eb.Type == apiclient.Bookmark && eb.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "" {
				eb = acRecv(t, wb, time.Minute)
			}
			if ea.Type != eb.Type || ea.Err != nil {
				t.Fatalf("events: protobuf %s (%v), JSON %s (%v)", ea.Type, ea.Err, eb.Type, eb.Err)
			}
			if ea.Type == apiclient.Bookmark {
				if ea.Object.ResourceVersion == "" || eb.Object.ResourceVersion == "" {
					t.Fatalf("end bookmark without a resourceVersion: %+v / %+v", ea.Object, eb.Object)
				}
				continue // the two streams may end their initial events at different revisions
			}
			sameObjects(t, string(ea.Type), ea.Object, eb.Object)
			done = ea.Type == apiclient.Deleted && ea.Object.Name == name
		}
		wa.Stop()
		wb.Stop()
	}
}

// A watch from a compacted resourceVersion of the uncached resource (podtemplates, served
// from etcd) ends with an ERROR event whose protobuf Status is a typed 410, over both
// transports.
func TestAPIClientProtobufExpiredWatch(t *testing.T) {
	c := cluster.ForTest(t)
	for _, tr := range []struct {
		name  string
		proto apiclient.WatchProtocol
	}{{"http2", apiclient.WatchChunked}, {"websocket", apiclient.WatchWebSocket}} {
		t.Run(tr.name, func(t *testing.T) {
			pb, js, _ := pbClients(t, c, tr.proto)
			ctx := acCtx(t, 2*time.Minute)
			ns := acNamespace(t, js)
			type podTemplate struct {
				meta.TypeMeta
				meta.ObjectMeta `json:"metadata"`
				Template        map[string]any `json:"template"`
			}
			pts := apiclient.NewResource[*podTemplate](pb, acPodTemplates).Namespace(ns)
			created, err := apiclient.NewResource[*podTemplate](js, acPodTemplates).Namespace(ns).Create(ctx, &podTemplate{
				TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"}, ObjectMeta: meta.ObjectMeta{Name: "pt"},
				Template: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}}, apiclient.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pts.Patch(ctx, "pt", apiclient.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), apiclient.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			w, err := pts.Watch(ctx, apiclient.ListOptions{ResourceVersion: created.ResourceVersion})
			if err != nil {
				t.Fatalf("watch from a compacted resourceVersion refused before its stream: %v", err)
			}
			defer w.Stop()
			ev := acRecv(t, w, time.Minute)
			st, ok := meta.AsStatus(ev.Err)
			if ev.Type != apiclient.Error || !ok || st.Code != http.StatusGone || !meta.IsResourceExpired(ev.Err) || st.Message == "" {
				t.Fatalf("event %s %v, want a 410 Expired ERROR", ev.Type, ev.Err)
			}
			t.Logf("ERROR event: %d %s: %s", st.Code, st.Reason, st.Message)
		})
	}
}
