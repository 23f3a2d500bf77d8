package demo

import (
	"context"
	"log/slog"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	informerotel "github.com/informerkit/informerkit/examples/otel"
	"github.com/informerkit/informerkit/meta"
)

// RunTwoControllers is Run with two controllers and trace context carried between them in
// the annotation "traceparent": "copier" reconciles ConfigMap default/hello and creates
// default/copy-hello; "checker" reconciles the copy. The spans it returns make one story:
// hello's watch event, copier's reconcile and its POST, then copy-hello's watch event and
// checker's reconcile, linked to copier's reconcile through the copy's annotation.
func RunTwoControllers(ctx context.Context, extra ...sdktrace.SpanProcessor) ([]sdktrace.ReadOnlySpan, error) {
	rec := tracetest.NewSpanRecorder()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(rec)}
	for _, p := range extra {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	defer func() { _ = tp.Shutdown(context.Background()) }()

	srv := apitest.NewServer()
	defer srv.Close()
	m, err := controller.NewManager(srv.Config(), controller.ManagerOptions{
		Logger:              slog.New(slog.DiscardHandler),
		Tracer:              informerotel.New(tp.Tracer("informerkit")),
		SkipPermissionCheck: true,
	})
	if err != nil {
		return nil, err
	}
	cms := client.TypedFor[*ConfigMap](m.Client())
	traced := controller.Options{TraceparentAnnotation: "traceparent"}
	copier, err := controller.New("copier", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if strings.HasPrefix(req.Name, "copy-") {
			return controller.Result{}, nil
		}
		cp := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: "copy-" + req.Name}}
		// ctx carries the reconcile span: the POST is its child, and the copy gets its
		// traceparent in the annotation.
		_, err := cms.Create(ctx, cp, client.CreateOptions{})
		if meta.IsAlreadyExists(err) {
			err = nil
		}
		return controller.Result{}, err
	}), traced)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	checker, err := controller.New("checker", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if req.Name == "copy-hello" {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		return controller.Result{}, nil
	}), traced)
	if err != nil {
		return nil, err
	}
	for _, c := range []*controller.Controller{copier, checker} {
		if err := c.Watch(controller.Kind(m, controller.EnqueueRequestForObject[*ConfigMap]())); err != nil {
			return nil, err
		}
		if err := m.Add(c); err != nil {
			return nil, err
		}
	}
	if err := runOnce(ctx, m, srv, done, "the copy was not reconciled", copier, checker); err != nil {
		return nil, err
	}
	return rec.Ended(), nil
}
