package informer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// abApp is an Argo CD-like Application: a status listing the resources it manages.
type abApp struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Project string            `json:"project"`
		RepoURL string            `json:"repoURL"`
		Values  map[string]string `json:"values,omitempty"`
	} `json:"spec"`
	Status struct {
		Resources []abAppResource `json:"resources"`
		Health    string          `json:"health"`
		Revision  string          `json:"revision"`
	} `json:"status"`
}

type abAppResource struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Health    string `json:"health,omitempty"`
	Message   string `json:"message,omitempty"`
}

var abAppGVR = meta.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// abAppJSON is the JSON of Application i at resourceVersion rv, of about size bytes.
func abAppJSON(i, rv, size int) []byte {
	a := &abApp{TypeMeta: meta.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: meta.ObjectMeta{Namespace: "argocd", Name: fmt.Sprintf("app-%05d", i), ResourceVersion: fmt.Sprint(rv),
			UID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Labels: map[string]string{"team": fmt.Sprint("team-", i%20)}}}
	a.Spec.Project, a.Spec.RepoURL = "default", "https://git.example.com/platform/apps.git"
	a.Spec.Values = map[string]string{"image.tag": "v1.2.3", "replicaCount": "3"}
	a.Status.Health, a.Status.Revision = "Healthy", fmt.Sprintf("%040x", rv)
	kinds := []string{"Deployment", "Service", "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "Ingress"}
	want, known := abAppResources[size]
	for k := 0; ; k++ {
		r := abAppResource{Version: "v1", Kind: kinds[k%len(kinds)], Namespace: "team-" + fmt.Sprint(i%20), Status: "Synced", Health: "Healthy"}
		r.Name = fmt.Sprintf("svc-%d-%s", k, strings.ToLower(r.Kind))
		if r.Kind == "Deployment" {
			r.Group, r.Message = "apps", "rollout complete: 3 of 3 updated replicas are available"
		}
		a.Status.Resources = append(a.Status.Resources, r)
		if known && k+1 < want {
			continue
		}
		if known || k%16 == 0 {
			if b, _ := json.Marshal(a); known || len(b) >= size {
				abAppResources[size] = k + 1
				return b
			}
		}
	}
}

// abAppResources remembers, by size, how many resources an Application of that size lists.
var abAppResources = map[int]int{}

// abAppServer serves, from bytes made once, a LIST of n Applications and a watch of events
// MODIFIED events (each Application in turn, new resourceVersions), written once the channel
// *release holds is closed, that then stays open.
func abAppServer(n, events, size int, release *atomic.Pointer[chan struct{}]) *httptest.Server {
	var list bytes.Buffer
	list.WriteString(`{"kind":"ApplicationList","apiVersion":"argoproj.io/v1alpha1","metadata":{"resourceVersion":"100"},"items":[`)
	for i := range n {
		if i > 0 {
			list.WriteByte(',')
		}
		list.Write(abAppJSON(i, 1, size))
	}
	list.WriteString("]}")
	var watch bytes.Buffer
	for e := range events {
		fmt.Fprintf(&watch, `{"type":"MODIFIED","object":%s}`+"\n", abAppJSON(e%n, 101+e, size))
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "" {
			w.Write(list.Bytes())
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-*release.Load():
		case <-r.Context().Done():
			return
		}
		w.Write(watch.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
}

// TestInformerParallelDecodeAB measures parallel decoding through an informer with its
// defaults (sharing on, managedFields dropped): the time from Run to synced over a LIST of
// Applications, then the events/s of a watch of MODIFIED events of them, sequential
// (DecodeWorkers 1) against parallel (the default), in alternating rounds, with the process
// CPU and the live heap at rest after the watch. The server hands out bytes made once (an
// httptest server in the same process, JSON, chunked). A measuring tool, not a test:
//
//	INFORMERKIT_PARALLEL_AB=1 go test -run TestInformerParallelDecodeAB -v ./informer/
//
// INFORMERKIT_PARALLEL_AB_SIZE (KB), _OBJECTS, _EVENTS and _ROUNDS change it.
func TestInformerParallelDecodeAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_PARALLEL_AB") == "" {
		t.Skip("set INFORMERKIT_PARALLEL_AB=1 to measure")
	}
	env := func(name string, def int) int {
		if v := os.Getenv("INFORMERKIT_PARALLEL_AB_" + name); v != "" {
			fmt.Sscan(v, &def)
		}
		return def
	}
	t.Setenv(EnvCacheMutationDetector, "false") // as in production (it deep-copies every object)
	size, objects, events, rounds := env("SIZE", 50)<<10, env("OBJECTS", 10000), env("EVENTS", 2000), env("ROUNDS", 5)
	var release atomic.Pointer[chan struct{}]
	srv := abAppServer(objects, events, size, &release)
	defer srv.Close()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	liveHeap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	type figures struct{ sync, syncCPU, rate, evCPU, heap float64 }
	run := func(workers int) figures {
		c, err := apiclient.New(&apiclient.Config{Host: srv.URL, WatchProtocol: apiclient.WatchChunked, DisableProtobuf: true, DecodeWorkers: workers})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var updates atomic.Int64
		all := make(chan struct{})
		inf := New(apiclient.NewResource[*abApp](c, abAppGVR), Options[*abApp]{Logger: discardLogger(), WatchList: reflector.WatchListOff})
		reg, _ := inf.AddEventHandler(ResourceEventHandlerFuncs[*abApp]{UpdateFunc: func(_, _ *abApp) {
			if updates.Add(1) == int64(events) {
				close(all)
			}
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); <-inf.Done() }()
		gate := make(chan struct{})
		release.Store(&gate)
		c0, t0 := cpu(), time.Now()
		go inf.Run(ctx)
		<-reg.Synced()
		var f figures
		f.sync, f.syncCPU = time.Since(t0).Seconds(), (cpu() - c0).Seconds()
		c1, t1 := cpu(), time.Now()
		close(gate)
		<-all
		el := time.Since(t1)
		f.rate, f.evCPU = float64(events)/el.Seconds(), float64((cpu()-c1).Microseconds())/float64(events)
		f.heap = float64(liveHeap())
		if n := len(inf.GetStore().List()); n != objects {
			t.Fatalf("cached %d of %d", n, objects)
		}
		return f
	}
	var res [2][]figures
	for round := range rounds {
		for i := range 2 {
			mode := (round + i) % 2 // 0 sequential, 1 parallel
			res[mode] = append(res[mode], run([]int{1, 0}[mode]))
		}
	}
	med := func(mode int, get func(figures) float64) float64 {
		v := make([]float64, 0, rounds)
		for _, f := range res[mode] {
			v = append(v, get(f))
		}
		s := slices.Sorted(slices.Values(v))
		return s[len(s)/2]
	}
	ratio := func(get func(figures) float64) string {
		var r []float64
		for i := range rounds {
			r = append(r, get(res[1][i])/get(res[0][i]))
		}
		s := slices.Sorted(slices.Values(r))
		return fmt.Sprintf("%.2f× (%.2f–%.2f)", s[len(s)/2], s[len(s)/4], s[(3*len(s))/4])
	}
	t.Logf("GOMAXPROCS=%d, %d Applications of %d KB, %d events, %d rounds, medians; ratio parallel/sequential (quartiles of per-round ratios)",
		runtime.GOMAXPROCS(0), objects, size>>10, events, rounds)
	for mode, name := range []string{"sequential", "parallel"} {
		t.Logf("%-10s sync %.2fs (CPU %.2fs), watch %.0f events/s (CPU %.0f µs/event), live heap with the cache %.1f MB", name,
			med(mode, func(f figures) float64 { return f.sync }), med(mode, func(f figures) float64 { return f.syncCPU }),
			med(mode, func(f figures) float64 { return f.rate }), med(mode, func(f figures) float64 { return f.evCPU }),
			med(mode, func(f figures) float64 { return f.heap })/(1<<20))
	}
	t.Logf("ratios: time to sync %s, sync CPU %s, events/s %s, CPU/event %s, live heap %s",
		ratio(func(f figures) float64 { return f.sync }), ratio(func(f figures) float64 { return f.syncCPU }),
		ratio(func(f figures) float64 { return f.rate }), ratio(func(f figures) float64 { return f.evCPU }),
		ratio(func(f figures) float64 { return f.heap }))
}
