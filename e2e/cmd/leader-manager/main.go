// Command leader-manager is a helper of the e2e tests (e2e/controller_le_test.go): one
// replica of a controller manager with leader election on a real Lease. It prints one line
// per event on stdout, with the wall clock in Unix nanoseconds, so that a test running several
// replicas as separate processes can check that they never lead at the same time:
//
//	SYNCED <id> <ns>             the caches synced (a standby is warm)
//	LEADING <id> <ns>            the leader-only runnables started
//	RECONCILE <id> <name> <ns>   the controller reconciled a ConfigMap of --namespace
//	STOPPED <id> <ns> <cause>    the leader-only runnables were told to stop
//	LISTS <id> <ns> <n>          Manager.Start returned; its informers listed n times in all
//	EXIT <id> <ns> <error|ok>    the process exits
//
// SIGTERM or SIGINT shut it down gracefully, releasing the Lease (unless --keep-lease).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
)

type configMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var out sync.Mutex

func emit(format string, args ...any) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf(format+"\n", args...)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig path")
	id := flag.String("id", "", "identity in the Lease")
	ns := flag.String("namespace", "default", "namespace of the Lease and of the watched ConfigMaps")
	lease := flag.String("lease", "leader-manager", "name of the Lease")
	keep := flag.Bool("keep-lease", false, "keep the Lease on shutdown (default: release it)")
	leaseDuration := flag.Duration("lease-duration", 3*time.Second, "LeaseDuration")
	renewDeadline := flag.Duration("renew-deadline", 2*time.Second, "RenewDeadline")
	retryPeriod := flag.Duration("retry-period", 400*time.Millisecond, "RetryPeriod")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := run(ctx, *kubeconfig, *id, *ns, *lease, *keep, *leaseDuration, *renewDeadline, *retryPeriod)
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	emit("EXIT %s %d %s", *id, time.Now().UnixNano(), result)
	if err != nil {
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, id, ns, lease string, keep bool, ld, rd, rp time.Duration) error {
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
		Logger:                  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		LeaderElection:          true,
		LeaderElectionID:        lease,
		LeaderElectionNamespace: ns,
		LeaderElectionIdentity:  id,
		LeaseDuration:           ld,
		RenewDeadline:           rd,
		RetryPeriod:             rp,
		LeaderElectionKeepLease: keep,
		GracefulShutdownTimeout: 5 * time.Second,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(controller.WithoutLeaderElection(controller.RunnableFunc(func(ctx context.Context) error {
		emit("SYNCED %s %d", id, time.Now().UnixNano())
		<-ctx.Done()
		return nil
	}))); err != nil {
		return err
	}
	if err := mgr.Add(controller.RunnableFunc(func(ctx context.Context) error {
		emit("LEADING %s %d", id, time.Now().UnixNano())
		<-ctx.Done()
		emit("STOPPED %s %d %v", id, time.Now().UnixNano(), context.Cause(ctx))
		return nil
	})); err != nil {
		return err
	}
	c, err := controller.New("leader-manager", controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
		emit("RECONCILE %s %s %d", id, req.Name, time.Now().UnixNano())
		return controller.Result{}, nil
	}), controller.Options{})
	if err != nil {
		return err
	}
	if err := c.Watch(controller.KindWithOptions(mgr, controller.EnqueueRequestForObject[*configMap](),
		controller.KindOptions[*configMap]{Informer: controller.InformerOptions{Resource: meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: ns}})); err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	var lists uint64
	for _, inf := range mgr.Factory().Informers() {
		lists += inf.Stats().Reflector.Lists
	}
	emit("LISTS %s %d %d", id, time.Now().UnixNano(), lists)
	return err
}
