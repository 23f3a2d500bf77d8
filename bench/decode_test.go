package bench

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/informerkit/informerkit/meta"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/informerkit/informerkit/apiclient"
)

// partialPod is what a controller that schedules on node and phase declares: metadata plus
// three fields. client-go cannot decode partially; its figure for obj=partial is the full
// *corev1.Pod decode its users get.
type partialPod struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
		PodIP string `json:"podIP"`
	} `json:"status"`
}

func loadFixture(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("%v (regenerate with INFORMERKIT_WRITE_FIXTURES=1 go test -run TestWriteDecodeFixtures)", err)
	}
	return data
}

// clientGoWatchDecoders builds client-go's watch decoding path exactly as rest.Request.Watch
// does for a typed clientset: the JSON framer, the streaming decoder of watch events, and
// restclientwatch.Decoder decoding each embedded object with the negotiated decoder.
func clientGoWatchDecoder(r io.Reader) *restclientwatch.Decoder {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		panic("no JSON serializer")
	}
	objectDecoder := scheme.Codecs.WithoutConversion().DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(r))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objectDecoder)
}

func clientGoObjectDecoder() runtime.Decoder {
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeJSON)
	return scheme.Codecs.WithoutConversion().DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
}

func countEvents(b *testing.B, data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if n == 0 {
		b.Fatal("empty fixture")
	}
	return n
}

func reportStream(b *testing.B, data []byte, events int) {
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func decodeInformerkit[T any](b *testing.B, data []byte, events int) {
	b.ReportAllocs()
	for b.Loop() {
		dec := apiclient.NewEventDecoder[T](bytes.NewReader(data), 0, "Pod")
		n := 0
		for {
			ev, err := dec.Next()
			if err == io.EOF {
				break
			}
			if err != nil || ev.Type == apiclient.Error {
				b.Fatalf("event %d: %v %v", n, err, ev.Err)
			}
			n++
		}
		if n != events {
			b.Fatalf("decoded %d events, want %d", n, events)
		}
	}
	reportStream(b, data, events)
}

func decodeClientGo(b *testing.B, data []byte, events int) {
	b.ReportAllocs()
	for b.Loop() {
		dec := clientGoWatchDecoder(bytes.NewReader(data))
		n := 0
		for {
			_, obj, err := dec.Decode()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatalf("event %d: %v", n, err)
			}
			if _, ok := obj.(*corev1.Pod); !ok {
				b.Fatalf("event %d: %T", n, obj)
			}
			n++
		}
		if n != events {
			b.Fatalf("decoded %d events, want %d", n, events)
		}
	}
	reportStream(b, data, events)
}

// BenchmarkDecodeWatch decodes a recorded watch stream of pod-sized events (400 events of
// ~6 KB: ADDED, MODIFIED, DELETED and BOOKMARK) from memory, so that only decoding is
// measured. obj=pod decodes into *corev1.Pod on both sides (apiclient's decoder accepts it:
// metav1.ObjectMeta has the getters meta.Object needs); obj=partial decodes a struct
// with metadata and three fields on informerkit's side.
func BenchmarkDecodeWatch(b *testing.B) {
	data := loadFixture(b, watchFixture)
	events := countEvents(b, data)
	b.Run("obj=pod/impl=informerkit", func(b *testing.B) { decodeInformerkit[*corev1.Pod](b, data, events) })
	b.Run("obj=pod/impl=client-go", func(b *testing.B) { decodeClientGo(b, data, events) })
	b.Run("obj=partial/impl=informerkit", func(b *testing.B) { decodeInformerkit[*partialPod](b, data, events) })
	b.Run("obj=partial/impl=client-go", func(b *testing.B) { decodeClientGo(b, data, events) })
}

// BenchmarkDecodeList decodes one LIST response of 500 pods (~3 MB).
func BenchmarkDecodeList(b *testing.B) {
	data := loadFixture(b, listFixture)
	const items = listItemsCount
	report := func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportMetric(float64(items)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
	}
	ours := func(decode func() (int, error)) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n, err := decode()
				if err != nil || n != items {
					b.Fatalf("%d items, %v", n, err)
				}
			}
			report(b)
		}
	}
	b.Run("items=500/obj=pod/impl=informerkit", ours(func() (int, error) {
		l, err := apiclient.DecodeList[*corev1.Pod](data)
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}))
	clientGo := func(b *testing.B) {
		dec := clientGoObjectDecoder()
		b.ReportAllocs()
		for b.Loop() {
			obj, _, err := dec.Decode(data, nil, &corev1.PodList{})
			if err != nil || len(obj.(*corev1.PodList).Items) != items {
				b.Fatalf("%v", err)
			}
		}
		report(b)
	}
	b.Run("items=500/obj=pod/impl=client-go", clientGo)
	b.Run("items=500/obj=partial/impl=informerkit", ours(func() (int, error) {
		l, err := apiclient.DecodeList[*partialPod](data)
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}))
	b.Run("items=500/obj=partial/impl=client-go", clientGo)
}
