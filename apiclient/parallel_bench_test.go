package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/informerkit/informerkit/meta"
)

// bulky is a custom resource as large as wanted: Argo CD-like, a status listing the
// resources an application manages (a 300-resource application is about 50 KB of JSON).
// The tests of parallel decoding keep their own type: its size is what they are about.
type bulky struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Spec            bulkySpec   `json:"spec"`
	Status          bulkyStatus `json:"status"`
}

type bulkySpec struct {
	Project string            `json:"project"`
	RepoURL string            `json:"repoURL"`
	Values  map[string]string `json:"values,omitempty"`
}

type bulkyStatus struct {
	Resources []bulkyResource `json:"resources"`
	Summary   []string        `json:"summary,omitempty"`
	Health    string          `json:"health"`
	Revision  string          `json:"revision"`
}

type bulkyResource struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Health    string `json:"health,omitempty"`
	Message   string `json:"message,omitempty"`
	SyncWave  int64  `json:"syncWave,omitempty"`
	Hook      bool   `json:"hook,omitempty"`
}

// newBulky returns a bulky object named name of about size bytes of JSON.
func newBulky(name string, size int, rv int) *bulky {
	b := &bulky{
		TypeMeta: meta.TypeMeta{APIVersion: "bench.informerkit.dev/v1", Kind: "Bulky"},
		ObjectMeta: meta.ObjectMeta{Namespace: "apps", Name: name, ResourceVersion: fmt.Sprint(rv),
			UID: fmt.Sprintf("00000000-0000-4000-8000-%012d", rv), Labels: map[string]string{"team": "payments", "tier": "backend"}},
		Spec: bulkySpec{Project: "default", RepoURL: "https://git.example.com/platform/" + name + ".git",
			Values: map[string]string{"image.tag": "v1.2.3", "replicaCount": "3"}},
		Status: bulkyStatus{Health: "Healthy", Revision: "4f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"},
	}
	kinds := []string{"Deployment", "Service", "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "Ingress"}
	for i := 0; ; i++ {
		k := kinds[i%len(kinds)]
		r := bulkyResource{Version: "v1", Kind: k, Namespace: "apps", Name: fmt.Sprintf("%s-%s-%d", name, k, i),
			Status: "Synced", Health: "Healthy", SyncWave: int64(i % 3)}
		if k == "Deployment" || k == "Ingress" {
			r.Group = "apps"
			r.Message = "deployment.apps/" + r.Name + " configured; rollout complete: 3 of 3 updated replicas are available"
		}
		b.Status.Resources = append(b.Status.Resources, r)
		if i%16 == 0 {
			data, _ := json.Marshal(b)
			if len(data) >= size {
				return b
			}
		}
	}
}

// bulkyStream is a watch stream of n MODIFIED events of bulky objects of about size bytes.
func bulkyStream(tb testing.TB, n, size int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	for i := range n {
		obj, err := json.Marshal(newBulky(fmt.Sprintf("app-%d", i%50), size, 1000+i))
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&buf, `{"type":"MODIFIED","object":%s}`+"\n", obj)
	}
	return buf.Bytes()
}

// watchFromBytes runs a watch stream over data, as a chunked watch of a JSON body does.
func watchFromBytes[T any](ctx context.Context, data []byte, dc decoding) *streamWatcher[T] {
	r := bytes.NewReader(data)
	src := &httpSource{body: io.NopCloser(r), fr: newFrameReader(r, DefaultMaxEventSize)}
	wctx, cancel := context.WithCancelCause(ctx)
	return newStreamWatcher[T](wctx, func() { cancel(errStopped) }, src, "Bulky", dc)
}

// BenchmarkParallelWatchDecode: events/s of a watch of large JSON objects decoded from
// memory, sequential (the thresholds out of reach) and parallel (GOMAXPROCS decoders).
// The consumer only counts events: the figure is the decoding path's.
func BenchmarkParallelWatchDecode(b *testing.B) {
	for _, size := range []int{6 << 10, 16 << 10, 50 << 10, 1 << 20} {
		n := max(8, min(400, (20<<20)/size))
		data := bulkyStream(b, n, size)
		for _, mode := range []string{"sequential", "parallel"} {
			b.Run(fmt.Sprintf("size=%dKB/mode=%s", size>>10, mode), func(b *testing.B) {
				restore := parallelThresholds
				defer func() { parallelThresholds = restore }()
				if mode == "sequential" {
					parallelThresholds.json, parallelThresholds.proto = math.MaxInt, math.MaxInt
				} else {
					parallelThresholds.json, parallelThresholds.proto = 0, 0
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				events := 0
				for b.Loop() {
					w := watchFromBytes[*bulky](context.Background(), data, decoding{})
					for ev := range w.ResultChan() {
						if ev.Type != Modified {
							b.Fatalf("event %v: %v", ev.Type, ev.Err)
						}
						events++
					}
					w.Stop()
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
