package runner_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/meta"
)

// Two controllers, one of which needs a custom resource the server does not serve: it is
// skipped and its /readyz entry says why; the other runs.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	configmaps := meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgets := meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	descs := []runner.Descriptor{
		{Name: "configmap-logger", Resources: []meta.GroupVersionResource{configmaps},
			Init: func(ctx context.Context, cc runner.ControllerContext) (bool, error) {
				c, err := controller.New(cc.Name, controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
					return controller.Result{}, nil
				}), controller.Options{})
				if err != nil {
					return false, err
				}
				// Metadata only, of one resource: meta.ObjectMeta names no kind, so the
				// resource is given (the exception to a registered type's).
				if err := c.Watch(controller.KindWithOptions(cc.Manager, controller.EnqueueRequestForObject[*meta.ObjectMeta](),
					controller.KindOptions[*meta.ObjectMeta]{Informer: controller.InformerOptions{Resource: configmaps}})); err != nil {
					return false, err
				}
				return true, cc.Manager.Add(c)
			}},
		{Name: "widget", Resources: []meta.GroupVersionResource{widgets},
			Init: func(ctx context.Context, cc runner.ControllerContext) (bool, error) { return true, nil }},
		{Name: "janitor", DisabledByDefault: true,
			Init: func(ctx context.Context, cc runner.ControllerContext) (bool, error) { return true, nil }},
	}

	// The enable list, as a command line would give it.
	var enabled []string
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	runner.ControllersVar(fs, &enabled, descs)
	if err := fs.Parse([]string{"--controllers=*,-janitor"}); err != nil {
		panic(err)
	}

	r, err := runner.New(mgr, descs, runner.Options{Controllers: enabled})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	readyz := func() string {
		rec := httptest.NewRecorder()
		mgr.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz?verbose", nil))
		return rec.Body.String()
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(readyz(), "[+]controller-configmap-logger ok") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, s := range r.Statuses() {
		fmt.Println(s.Name, s.Status, s.Err)
	}
	for line := range strings.Lines(readyz()) {
		if strings.Contains(line, "controller-") {
			fmt.Print(line)
		}
	}
	cancel()
	fmt.Println("Run:", <-done)
	// Output:
	// configmap-logger started <nil>
	// janitor disabled <nil>
	// widget skipped resource example.com/v1/widgets is not served
	// [+]controller-configmap-logger ok
	// [-]controller-widget failed: resource example.com/v1/widgets is not served
	// Run: <nil>
}
