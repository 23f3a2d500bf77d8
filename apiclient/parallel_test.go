package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
)

// withParallel runs f with frames of at least threshold bytes decoded in parallel by up to
// workers goroutines with budget bytes in flight (threshold math.MaxInt: the sequential
// path).
func withParallel(workers, threshold, budget int, f func()) {
	oldT, oldP := parallelThresholds, parallelProcs
	defer func() { parallelThresholds, parallelProcs = oldT, oldP }()
	parallelThresholds.json, parallelThresholds.proto, parallelThresholds.budget, parallelProcs = threshold, threshold, budget, workers
	f()
}

var fuzzPodKind = protoKindFor(meta.GroupVersionResource{Version: "v1", Resource: "pods"}, "")

// watchOutcome is everything a watch of the stream data delivers: each event's type,
// object and error, then Err.
func watchOutcome(data []byte, protobuf bool, kind string, halfReads bool) string {
	var r io.Reader = bytes.NewReader(data)
	if halfReads {
		r = iotest.HalfReader(r)
	}
	src := &httpSource{body: io.NopCloser(r)}
	if protobuf {
		src.pr = newProtoReader(r, 1<<20)
	} else {
		src.fr = newFrameReader(r, 1<<20)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	w := newStreamWatcher[*fuzzPod](ctx, func() { cancel(errStopped) }, src, kind, decoding{pk: fuzzPodKind})
	var out strings.Builder
	for ev := range w.ResultChan() {
		b, _ := json.Marshal(ev.Object)
		fmt.Fprintf(&out, "%s %s %v\n", ev.Type, b, ev.Err)
	}
	w.Stop()
	fmt.Fprintf(&out, "end: %v", w.Err())
	return out.String()
}

var errStopHere = errors.New("stop here")

// listOutcome is everything ListEach's decoding of the body data hands over: each item,
// then the list's metadata and error. fn fails at item stopAt (0: never).
func listOutcome(data []byte, protobuf bool, kind string, stopAt int) string {
	var out strings.Builder
	n := 0
	fn := func(p *fuzzPod) error {
		if n++; n == stopAt {
			return errStopHere
		}
		b, _ := json.Marshal(p)
		fmt.Fprintf(&out, "%s\n", b)
		return nil
	}
	od := newObjectDecoder(decoding{})
	defer od.release()
	kc := &kindCheck{want: kind}
	var lm meta.ListMeta
	var err error
	if protobuf {
		lm, err = decodeProtoListStream(bytes.NewReader(data), 1<<20, od, fuzzPodKind, kc, fn)
	} else {
		lm, err = decodeListStreamWith(bytes.NewReader(data), 1<<20, od, kc, fn)
	}
	b, _ := json.Marshal(lm)
	fmt.Fprintf(&out, "metadata %s kind %q err: %v", b, kc.got, err)
	return out.String()
}

// checkParallel compares the sequential and the parallel decoding of data (mode: bit 0
// protobuf, bit 1 a list, bit 2 a kind check); the parallel path takes frames of threshold
// bytes and more.
func checkParallel(t *testing.T, data []byte, mode byte, threshold, stopAt int) {
	t.Helper()
	protobuf, list, kind := mode&1 != 0, mode&2 != 0, ""
	if mode&4 != 0 {
		kind = "Pod"
	}
	run := func() string {
		if list {
			return listOutcome(data, protobuf, kind, stopAt)
		}
		return watchOutcome(data, protobuf, kind, stopAt%2 == 1)
	}
	var seq string
	withParallel(1, math.MaxInt, parallelBudget, func() { seq = run() })
	for _, budget := range []int{parallelBudget, 6000} {
		var par string
		withParallel(3, threshold, budget, func() { par = run() })
		if seq != par {
			t.Fatalf("mode %d, threshold %d, budget %d, stop at %d:\nsequential:\n%s\nparallel:\n%s", mode, threshold, budget, stopAt, seq, par)
		}
	}
}

// parallelSeeds are streams and list bodies of every mode of checkParallel: JSON events of
// pods large and small, ERROR and BOOKMARK events, an object of another kind, a malformed
// frame; the protobuf frames recorded from kube-apiserver; lists of the same pods.
func parallelSeeds(tb testing.TB) map[byte][][]byte {
	big := func(name string, n int) string {
		data := map[string]string{}
		for i := range n {
			data[fmt.Sprintf("key-%04d", i)] = strings.Repeat(string(rune('a'+i%26)), 40)
		}
		b, _ := json.Marshal(map[string]any{"kind": "Pod", "apiVersion": "v1",
			"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": "7"}, "data": data})
		return string(b)
	}
	ev := func(typ, obj string) string { return `{"type":"` + typ + `","object":` + obj + "}\n" }
	seeds := map[byte][][]byte{}
	for _, kind := range []byte{0, 4} {
		seeds[kind] = append(seeds[kind],
			[]byte(ev("ADDED", podA)+ev("MODIFIED", big("big", 200))+ev("MODIFIED", podB)+ev("ADDED", big("big2", 40))+
				ev("BOOKMARK", `{"kind":"Pod","metadata":{"resourceVersion":"99"}}`)),
			[]byte(ev("ADDED", big("a", 100))+ev("ADDED", `{"kind":"ConfigMap","metadata":{"name":"x"}}`)+ev("ADDED", big("b", 100))+
				ev("ERROR", `{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}`)+ev("ADDED", podA)),
			[]byte(ev("ADDED", big("a", 100))+ev("MODIFIED", `{"metadata":{"name":1}}`)+ev("ADDED", big("b", 100))),
			[]byte(ev("ADDED", big("a", 100))+`{"type":"ADDED","object":{"metadata":`))
		seeds[2|kind] = append(seeds[2|kind],
			[]byte(`{"kind":"PodList","metadata":{"resourceVersion":"12"},"items":[`+podA+`,`+big("x", 150)+`,`+podB+`,`+big("y", 60)+`]}`),
			[]byte(`{"items":[`+big("x", 150)+`,{"metadata":{"name":[]}},`+big("y", 60)+`],"metadata":{"continue":"c"}}`),
			[]byte(`{"items":[`+big("x", 150)+`,{"kind":"ConfigMap"},`+podB+`]}`),
			[]byte(`{"items":[`+big("x", 150)+`,`+podA+`,`+big("y", 60)+`,7]}`),
			[]byte(`{"items":[`+big("x", 150)+`,`+podA+`,`))
	}
	frames := recordedFrames(tb)
	var stream []byte
	var items []any
	for _, name := range []string{"watch-01-added.pb", "watch-02-bookmark.pb", "watch-03-modified.pb", "watch-04-deleted-or-modified.pb", "watch-05-deleted-or-modified.pb", "watch-06-error-410.pb"} {
		stream = kubeproto.AppendFrame(stream, frames[name])
		if typ, obj, err := kubeproto.ParseWatchEvent(frames[name]); err == nil && typ != "ERROR" && typ != "BOOKMARK" {
			m, err := kubeproto.DecodeObject(obj)
			if err != nil {
				tb.Fatal(err)
			}
			items = append(items, m)
		}
	}
	list, err := kubeproto.EncodeObject(map[string]any{"apiVersion": "v1", "kind": "PodList",
		"metadata": map[string]any{"resourceVersion": "12"}, "items": items})
	if err != nil {
		tb.Fatal(err)
	}
	for _, kind := range []byte{0, 4} {
		seeds[1|kind] = append(seeds[1|kind], stream, stream[:len(stream)-20])
		seeds[3|kind] = append(seeds[3|kind], list, list[:len(list)-30])
	}
	return seeds
}

// TestParallelDecodeSeeds: on every seed, each threshold (every frame, the large ones,
// none) and with fn failing at each item, the parallel path hands over exactly what the
// sequential one does.
func TestParallelDecodeSeeds(t *testing.T) {
	for mode, bodies := range parallelSeeds(t) {
		for i, data := range bodies {
			t.Run(fmt.Sprintf("mode=%d/%d", mode, i), func(t *testing.T) {
				for _, threshold := range []int{0, 1000, 4000, 1 << 20} {
					for stopAt := range 6 {
						checkParallel(t, data, mode, threshold, stopAt)
					}
				}
			})
		}
	}
}

// FuzzParallelDecode: for any stream or list body, the parallel path delivers the same
// events or items, in the same order, with the same errors, as the sequential path.
func FuzzParallelDecode(f *testing.F) {
	for mode, bodies := range parallelSeeds(f) {
		for _, data := range bodies {
			f.Add(data, mode, uint16(1000), uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte, threshold uint16, stopAt uint8) {
		checkParallel(t, data, mode&7, int(threshold), int(stopAt%8))
	})
}

// A watch that has decoded large events in parallel and waits for the next one keeps no
// goroutine of the parallel path (decoders, the goroutine handing events over): they go as
// soon as nothing waits, and come back for the next large events, still in order.
func TestParallelWatchAtRestKeepsNoGoroutine(t *testing.T) {
	withParallel(2, 1000, parallelBudget, func() {
		r, wr := io.Pipe()
		src := &httpSource{body: r, fr: newFrameReader(r, 1<<20)}
		ctx, cancel := context.WithCancelCause(context.Background())
		w := newStreamWatcher[*bulky](ctx, func() { cancel(errStopped) }, src, "Bulky", decoding{})
		defer w.Stop()
		for burst := range 3 {
			written := make(chan error, 1)
			go func() {
				_, err := wr.Write(bulkyStream(t, 8, 4<<10))
				written <- err
			}()
			for i := range 8 {
				ev := <-w.ResultChan()
				if ev.Type != Modified || ev.Object.ResourceVersion != fmt.Sprint(1000+i) {
					t.Fatalf("burst %d, event %d: %s %v (rv %v)", burst, i, ev.Type, ev.Err, ev.Object)
				}
			}
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			// Every event is handed over and the reader waits for more: the pool's decoders
			// and the handing-over goroutine leave by themselves.
			for parallelGoroutines() > 0 {
				runtime.Gosched()
			}
		}
	})
}

// parallelGoroutines counts the goroutines of the parallel path (decoders, hand-over).
func parallelGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("apiclient.(*orderedPool[...]).work")) + bytes.Count(buf, []byte("apiclient.(*handOver[...]).run"))
}
