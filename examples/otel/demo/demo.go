// Package demo runs a small controller with OpenTelemetry tracing against an in-process API
// server, and returns the spans of one object's journey: its watch event, the queue, the
// reconcile and the reconcile's write. cmd/tracedemo prints them; the tests check them.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	informerotel "github.com/informerkit/informerkit/examples/otel"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap is the part of a ConfigMap the controller reads.
type ConfigMap struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var _ = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

// Run starts the API server and a Manager traced by an OpenTelemetry SDK, creates the
// ConfigMap default/hello, waits until the controller has annotated it, and returns the spans
// that ended by then (with the extra SpanProcessors, such as an exporter, fed too).
func Run(ctx context.Context, extra ...sdktrace.SpanProcessor) ([]sdktrace.ReadOnlySpan, error) {
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
	done := make(chan struct{})
	c, err := controller.New("annotator", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		cm, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{}) // from the cache
		if meta.IsNotFound(err) {
			return controller.Result{}, nil
		} else if err != nil {
			return controller.Result{}, err
		}
		if cm.Annotations["demo/seen"] != "" {
			close(done)
			return controller.Result{}, nil
		}
		cm.Annotations = map[string]string{"demo/seen": "true"} // Get returned a copy
		// ctx carries the reconcile span: the PUT is its child.
		_, err = cms.Update(ctx, cm, client.UpdateOptions{})
		return controller.Result{}, err
	}), controller.Options{})
	if err != nil {
		return nil, err
	}
	if err := c.Watch(controller.Kind(m, controller.EnqueueRequestForObject[*ConfigMap]())); err != nil {
		return nil, err
	}
	if err := m.Add(c); err != nil {
		return nil, err
	}
	if err := runOnce(ctx, m, srv, done, "the ConfigMap was not annotated", c); err != nil {
		return nil, err
	}
	return rec.Ended(), nil
}

// runOnce starts m, waits for the controllers to start, creates the ConfigMap default/hello
// on srv and stops m once done is closed (or after a minute, an error naming what).
func runOnce(ctx context.Context, m *controller.Manager, srv *apitest.Server, done <-chan struct{}, what string, cs ...*controller.Controller) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- m.Start(ctx) }()
	for _, c := range cs {
		select {
		case <-c.Started():
		case err := <-errc:
			return err
		}
	}
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "hello"}}); err != nil {
		cancel()
		<-errc
		return err
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		cancel()
		<-errc
		return errors.New("demo: " + what + " within a minute")
	}
	cancel()
	if err := <-errc; err != nil {
		return fmt.Errorf("demo: manager: %w", err)
	}
	return nil
}
