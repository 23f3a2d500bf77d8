package controllertest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap is what the crash tests' controller writes.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// twoWrites is a controller that makes two ConfigMaps per Pod, <pod>-a then <pod>-b,
// waiting on gate (if set) between them.
func twoWrites(gate chan struct{}) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		return controller.NewBuilder(mgr, "two").For(controller.Primary[*Pod]()).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				for _, suffix := range []string{"-a", "-b"} {
					cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name + suffix}}
					if _, err := cms.Create(ctx, cm, client.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
						return controller.Result{}, err
					}
					if gate != nil && suffix == "-a" {
						<-gate
					}
				}
				return controller.Result{}, nil
			}))
	}
}

func registerCrashKinds() {
	kinds.MustRegister[*Pod](kinds.Pod)
	kinds.MustRegister[*ConfigMap](kinds.ConfigMap)
}

// CrashAfterWrites kills the process right after its first write: the second never
// reaches the server, and a restarted Manager (a new client, empty caches) finishes.
func TestCrashAfterWritesStopsBetweenTwoWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}, Timeout: time.Minute})
		registerCrashKinds()
		run := env.StartManager(controller.ManagerOptions{}, twoWrites(nil))
		run.CrashAfterWrites(1)
		createPod(env, "web", 0)
		<-run.Crashed()
		synctest.Wait()
		if _, ok := controllertest.Get[*ConfigMap](env, "configmaps", "default", "web-a"); !ok {
			t.Fatal("the first write did not commit")
		}
		if _, ok := controllertest.Get[*ConfigMap](env, "configmaps", "default", "web-b"); ok {
			t.Fatal("a write after the crash reached the server")
		}
		again := env.StartManager(controller.ManagerOptions{}, twoWrites(nil))
		if again.Client == run.Client {
			t.Fatalf("the restarted Manager is the same client %q", run.Client)
		}
		controllertest.WaitFor(env, "configmaps", "default", "web-b", func(*ConfigMap) bool { return true })
	})
}

// Crash does not wait for a reconcile in progress: it returns while the reconcile is
// blocked, and the write the reconcile makes afterwards is dropped.
func TestCrashAbandonsTheReconcileInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}, Timeout: time.Minute})
		registerCrashKinds()
		gate := make(chan struct{})
		run := env.StartManager(controller.ManagerOptions{}, twoWrites(gate))
		createPod(env, "web", 0)
		controllertest.WaitFor(env, "configmaps", "default", "web-a", func(*ConfigMap) bool { return true })
		synctest.Wait() // the reconcile waits on gate
		run.Crash()     // returns with the reconcile still blocked
		if !run.IsCrashed() {
			t.Fatal("not crashed")
		}
		close(gate)
		synctest.Wait()
		if _, ok := controllertest.Get[*ConfigMap](env, "configmaps", "default", "web-b"); ok {
			t.Fatal("the abandoned reconcile's write reached the server")
		}
		dropped := env.Server.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbCreate, Resource: "configmaps"})
		var refused int
		for _, r := range dropped {
			if r.UserAgent == run.Client && r.Code == apitest.CodeDropped {
				refused++
			}
		}
		if refused == 0 {
			t.Errorf("no create of %s dropped: %+v", run.Client, dropped)
		}
		if !env.Server.Clients().Killed(run.Client) {
			t.Error("the client is not dead on the server")
		}
	})
}
