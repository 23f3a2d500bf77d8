package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
)

// abConfigMap is a ConfigMap as a controller declares it, for protobuf streams of a chosen
// object size.
type abConfigMap struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data"`
}

var abConfigMapKind = protoKindFor(meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "")

// protoConfigMapStream is a protobuf watch stream of n MODIFIED ConfigMaps of about size
// bytes each, and the protobuf LIST body of the same objects.
func protoConfigMapStream(tb testing.TB, n, size int) (stream, list []byte) {
	var items []any
	for i := range n {
		data := map[string]any{}
		for k := 0; k*90 < size; k++ {
			data[fmt.Sprintf("setting-%05d", k)] = fmt.Sprintf("value %d of object %d: %s", k, i, strings.Repeat("x", 50))
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data,
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "apps", "resourceVersion": fmt.Sprint(1000 + i),
				"labels": map[string]any{"team": "payments"}}}
		b, err := kubeproto.EncodeObject(obj)
		if err != nil {
			tb.Fatal(err)
		}
		stream = kubeproto.AppendFrame(stream, kubeproto.WatchEvent("MODIFIED", b))
		items = append(items, obj)
	}
	list, err := kubeproto.EncodeObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "metadata": map[string]any{"resourceVersion": "5"}, "items": items})
	if err != nil {
		tb.Fatal(err)
	}
	return stream, list
}

// jsonBulkyList is the JSON LIST body of n bulky objects of about size bytes.
func jsonBulkyList(n, size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"BulkyList","apiVersion":"bench.informerkit.dev/v1","metadata":{"resourceVersion":"5"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		obj, _ := json.Marshal(newBulky(fmt.Sprintf("app-%d", i), size, 1000+i))
		b.Write(obj)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// sharedStrings is a stand-in for the informer's string sharer (DecodeOptions.Strings): a
// table behind one mutex, looked up for every decoded string.
type sharedStrings struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *sharedStrings) String(b []byte) string {
	s.mu.Lock()
	v, ok := s.m[string(b)]
	if !ok && len(s.m) < 1<<16 {
		v = string(b)
		s.m[v] = v
	}
	s.mu.Unlock()
	if !ok {
		return string(b)
	}
	return v
}

// TestParallelDecodeAB measures the parallel decode against the sequential one: events/s
// (items/s for lists) by wall time and process CPU per event, in alternating rounds over
// the same bytes in memory, for JSON and protobuf objects of several sizes, with the
// decoding an informer asks for (managedFields omitted, strings looked up in a shared
// table) and without. The consumer only counts. A measuring tool, not a test:
//
//	INFORMERKIT_PARALLEL_AB=1 go test -run TestParallelDecodeAB -v ./apiclient/
//
// INFORMERKIT_PARALLEL_AB_SIZES (KB, comma-separated) and _ROUNDS narrow it.
func TestParallelDecodeAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_PARALLEL_AB") == "" {
		t.Skip("set INFORMERKIT_PARALLEL_AB=1 to measure")
	}
	rounds := 15
	if v := os.Getenv("INFORMERKIT_PARALLEL_AB_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}
	sizes := []int{2, 4, 8, 16, 32, 50, 128, 1024}
	if v := os.Getenv("INFORMERKIT_PARALLEL_AB_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			var n int
			fmt.Sscan(f, &n)
			sizes = append(sizes, n)
		}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	type workload struct {
		name string
		n    int
		run  func(opts DecodeOptions) int // decodes once, returns the events or items
	}
	var workloads []workload
	for _, kb := range sizes {
		size := kb << 10
		n := max(16, (8<<20)/size)
		js := bulkyStream(t, n, size)
		jl := jsonBulkyList(n, size)
		ps, pl := protoConfigMapStream(t, n, size)
		watch := func(data []byte, protobuf bool) func(DecodeOptions) int {
			return func(o DecodeOptions) int {
				r := bytes.NewReader(data)
				src := &httpSource{body: nopCloser{r}}
				if protobuf {
					src.pr = newProtoReader(r, DefaultMaxEventSize)
				} else {
					src.fr = newFrameReader(r, DefaultMaxEventSize)
				}
				ctx, cancel := context.WithCancelCause(context.Background())
				var events int
				if protobuf {
					w := newStreamWatcher[*abConfigMap](ctx, func() { cancel(errStopped) }, src, "", decoding{pk: abConfigMapKind, opts: o})
					for ev := range w.ResultChan() {
						if ev.Type != Modified {
							t.Fatal(ev.Err)
						}
						events++
					}
					w.Stop()
				} else {
					w := newStreamWatcher[*bulky](ctx, func() { cancel(errStopped) }, src, "", decoding{opts: o})
					for ev := range w.ResultChan() {
						if ev.Type != Modified {
							t.Fatal(ev.Err)
						}
						events++
					}
					w.Stop()
				}
				return events
			}
		}
		list := func(data []byte, protobuf bool) func(DecodeOptions) int {
			return func(o DecodeOptions) int {
				od := newObjectDecoder(decoding{opts: o})
				defer od.release()
				items := 0
				var err error
				if protobuf {
					_, err = decodeProtoListStream(bytes.NewReader(data), DefaultMaxEventSize, od, abConfigMapKind, nil, func(*abConfigMap) error { items++; return nil })
				} else {
					_, err = decodeListStreamWith(bytes.NewReader(data), DefaultMaxEventSize, od, nil, func(*bulky) error { items++; return nil })
				}
				if err != nil {
					t.Fatal(err)
				}
				return items
			}
		}
		workloads = append(workloads,
			workload{fmt.Sprintf("watch/json/%dKB", kb), n, watch(js, false)},
			workload{fmt.Sprintf("watch/protobuf/%dKB", kb), n, watch(ps, true)},
			workload{fmt.Sprintf("list/json/%dKB", kb), n, list(jl, false)},
			workload{fmt.Sprintf("list/protobuf/%dKB", kb), n, list(pl, true)})
	}
	t.Logf("GOMAXPROCS=%d, %d rounds; medians; ratio = parallel events/s / sequential (p25-p75 of the per-round ratios)", runtime.GOMAXPROCS(0), rounds)
	t.Logf("%-24s %-8s %12s %12s %18s %14s %14s", "workload", "decode", "seq ev/s", "par ev/s", "ratio", "seq CPU µs/ev", "par CPU µs/ev")
	for _, w := range workloads {
		for _, dec := range []string{"plain", "informer"} {
			var seqRate, parRate, ratios, seqCPU, parCPU []float64
			for round := range rounds {
				var o DecodeOptions
				if dec == "informer" {
					o = DecodeOptions{OmitManagedFields: true, Strings: (&sharedStrings{m: map[string]string{}}).String}
				}
				var rate, cpuPer [2]float64
				for i := range 2 {
					mode := (round + i) % 2 // 0 sequential, 1 parallel
					threshold := math.MaxInt
					if mode == 1 {
						threshold = 0
					}
					withParallel(0, threshold, parallelBudget, func() {
						runtime.GC()
						c0, t0 := cpu(), time.Now()
						n := w.run(o)
						el, c := time.Since(t0), cpu()-c0
						rate[mode] = float64(n) / el.Seconds()
						cpuPer[mode] = float64(c.Microseconds()) / float64(n)
					})
				}
				seqRate, parRate = append(seqRate, rate[0]), append(parRate, rate[1])
				seqCPU, parCPU = append(seqCPU, cpuPer[0]), append(parCPU, cpuPer[1])
				ratios = append(ratios, rate[1]/rate[0])
			}
			q := func(v []float64, p float64) float64 {
				s := slices.Sorted(slices.Values(v))
				return s[int(p*float64(len(s)-1)+0.5)]
			}
			t.Logf("%-24s %-8s %12.0f %12.0f %6.2f× (%.2f–%.2f) %14.1f %14.1f", w.name, dec, q(seqRate, .5), q(parRate, .5),
				q(ratios, .5), q(ratios, .25), q(ratios, .75), q(seqCPU, .5), q(parCPU, .5))
		}
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestParallelDecodeHeapAtRestAB measures what a watch keeps once it has decoded a burst of
// large JSON events and waits for more, sequential against parallel, in alternating rounds:
// the live heap (HeapAlloc after two collections, which empty the frame-buffer pools), the
// goroutines and their stacks (StackInuse), beside the same figures before the watch was
// opened. A measuring tool, not a test (INFORMERKIT_PARALLEL_AB=1).
func TestParallelDecodeHeapAtRestAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_PARALLEL_AB") == "" {
		t.Skip("set INFORMERKIT_PARALLEL_AB=1 to measure")
	}
	const n, size, rounds = 160, 50 << 10, 7
	data := bulkyStream(t, n, size)
	atRest := func() (heap, stack uint64, goroutines int) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, ms.StackInuse, runtime.NumGoroutine()
	}
	var d [2][3][]float64 // mode, figure: after - before
	for round := range rounds {
		for i := range 2 {
			mode := (round + i) % 2
			threshold := math.MaxInt
			if mode == 1 {
				threshold = 0
			}
			withParallel(0, threshold, parallelBudget, func() {
				h0, s0, g0 := atRest()
				r, wr := io.Pipe()
				src := &httpSource{body: r, fr: newFrameReader(r, DefaultMaxEventSize)}
				ctx, cancel := context.WithCancelCause(context.Background())
				w := newStreamWatcher[*bulky](ctx, func() { cancel(errStopped) }, src, "Bulky", decoding{})
				written := make(chan error, 1)
				go func() { _, err := wr.Write(data); written <- err }()
				var last *bulky // the consumer keeps nothing but the last object
				for range n {
					last = (<-w.ResultChan()).Object
				}
				if err := <-written; err != nil {
					t.Fatal(err)
				}
				for parallelGoroutines() > 0 {
					runtime.Gosched()
				}
				h1, s1, g1 := atRest()
				d[mode][0] = append(d[mode][0], float64(int64(h1)-int64(h0)))
				d[mode][1] = append(d[mode][1], float64(int64(s1)-int64(s0)))
				d[mode][2] = append(d[mode][2], float64(g1-g0))
				runtime.KeepAlive(last)
				w.Stop()
			})
		}
	}
	med := func(v []float64) float64 { s := slices.Sorted(slices.Values(v)); return s[len(s)/2] }
	for mode, name := range []string{"sequential", "parallel"} {
		t.Logf("%s: a watch at rest after %d events of %d KB: live heap +%.0f KB, stacks +%.0f KB, goroutines +%.0f (medians of %d)",
			name, n, size>>10, med(d[mode][0])/1024, med(d[mode][1])/1024, med(d[mode][2]), rounds)
	}
}
