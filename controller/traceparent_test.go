package controller

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/tracing"
)

// propRecorder is a spanRecorder that is also a tracing.Propagator: a span's traceparent
// carries its id as the span id.
type propRecorder struct{ *spanRecorder }

func (p propRecorder) Traceparent(ctx context.Context) string {
	s, _ := ctx.Value(recSpanKey{}).(*recSpan)
	if s == nil {
		return ""
	}
	return fmt.Sprintf("00-%032x-%016x-01", 1, s.id)
}

func (p propRecorder) Remote(tp string) context.Context {
	t, ok := tracing.ParseTraceparent(tp)
	if !ok {
		return nil
	}
	id := int(binary.BigEndian.Uint64(t.SpanID[:]))
	p.mu.Lock()
	defer p.mu.Unlock()
	if id < 1 || id > len(p.spans) {
		return nil
	}
	return context.WithValue(context.Background(), recSpanKey{}, p.spans[id-1])
}

// TestATraceCrossesTwoControllers: controller "copier" reconciles ConfigMap src and creates
// ConfigMap copy through the Manager's client; controller "copies" reconciles copy. With
// TraceparentAnnotation, copy carries the traceparent of copier's reconcile span, and the
// copies reconcile (the child of its own watch event) links to that span: one trace,
// followed across the two controllers through the object.
func TestATraceCrossesTwoControllers(t *testing.T) {
	srv := newTestServer(t)
	tr := propRecorder{&spanRecorder{}}
	m := newManager(t, srv, ManagerOptions{Tracer: tr})
	cms := client.TypedFor[*testobj.ConfigMap](m.Client())
	created := make(chan string, 1)
	copier, err := New("copier", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		if req.Name != "src" {
			return Result{}, nil
		}
		p := testobj.NewConfigMap(req.Namespace, "copy", nil)
		if _, err := cms.Create(ctx, p, client.CreateOptions{}); err != nil {
			return Result{}, err
		}
		created <- p.Annotations["traceparent"]
		return Result{}, nil
	}), Options{Logger: quiet, TraceparentAnnotation: "traceparent"})
	if err != nil {
		t.Fatal(err)
	}
	if err := copier.Watch(Kind[*testobj.ConfigMap](m, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	reconciled := make(chan struct{}, 4)
	podCtl, err := New("copies", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		if req.Name == "copy" {
			reconciled <- struct{}{}
		}
		return Result{}, nil
	}), Options{Logger: quiet, TraceparentAnnotation: "traceparent"})
	if err != nil {
		t.Fatal(err)
	}
	if err := podCtl.Watch(Kind[*testobj.ConfigMap](m, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Controller{copier, podCtl} {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	startManager(t, m)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "src"}}); err != nil {
		t.Fatal(err)
	}
	var written string
	select {
	case written = <-created:
	case <-time.After(testTimeout):
		t.Fatal("copier did not create the copy")
	}
	select {
	case <-reconciled:
	case <-time.After(testTimeout):
		t.Fatal("the copies controller did not reconcile the copy")
	}
	src := slices.DeleteFunc(tr.find(tracing.SpanReconcile, tracing.AttrName, "src"), func(s recSpan) bool {
		return s.attrs[tracing.AttrController] != "copier"
	})
	if len(src) != 1 {
		t.Fatalf("%d reconcile spans of src", len(src))
	}
	if want := tr.Traceparent(context.WithValue(context.Background(), recSpanKey{}, &recSpan{id: src[0].id})); written != want {
		t.Fatalf("the copy's annotation %q, want copier's reconcile span %q", written, want)
	}
	obj, err := srv.Get("configmaps", "default", "copy")
	var stored testobj.ConfigMap
	if err == nil {
		err = obj.Into(&stored)
	}
	if err != nil || stored.Annotations["traceparent"] != written {
		t.Fatalf("the server's copy: %+v %v", stored, err)
	}
	var linked bool
	for _, s := range tr.find(tracing.SpanReconcile, tracing.AttrController, "copies") {
		if s.attrs[tracing.AttrName] == "copy" && slices.Contains(s.links, src[0].id) && s.parent != 0 {
			linked = true
		}
	}
	if !linked {
		t.Fatalf("no reconcile of the copy links to copier's reconcile span %d: %+v", src[0].id, tr.find(tracing.SpanReconcile, tracing.AttrController, "copies"))
	}
}

// Off by default, and a value that is not a traceparent is ignored, not passed to the tracer.
func TestTraceparentAnnotationIsOptInAndChecked(t *testing.T) {
	tr := propRecorder{&spanRecorder{}}
	tk := newEventTracker("c", tr, nil)
	cm := testobj.NewConfigMap("ns", "a", nil)
	cm.Annotations = map[string]string{"traceparent": "00-00000000000000000000000000000001-0000000000000001-01"}
	if tk.remoteOf(cm) != nil {
		t.Fatal("read an annotation with the option off")
	}
	if ctx := tk.markWrites(context.Background(), context.Background()); ctx != context.Background() {
		t.Fatal("marked writes with the option off")
	}
	tk.setTraceparentAnnotation("traceparent")
	tr.Start(context.Background(), "x", tracing.StartOptions{}) // span 1 exists
	if tk.remoteOf(cm) == nil {
		t.Fatal("a valid traceparent was not read")
	}
	cm.Annotations["traceparent"] = "garbage"
	if tk.remoteOf(cm) != nil {
		t.Fatal("an invalid traceparent reached the tracer")
	}
	plain := newEventTracker("c", &spanRecorder{}, nil) // not a Propagator
	plain.setTraceparentAnnotation("traceparent")
	if plain.prop != nil {
		t.Fatal("propagation on with a Tracer that cannot propagate")
	}
}
