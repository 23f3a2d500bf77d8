package e2e

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
)

// The controller builder (issue 17) against the real kube-apiserver: Owns and ChildrenOf on
// owner references the server stored, and the registered kind checked against the server's
// discovery.

type builderSecret struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	StringData      map[string]string `json:"stringData,omitempty"`
}

// A ConfigMap controller that owns one Secret per ConfigMap: the Secret's add event reconciles
// its owner, which then finds it with ChildrenOf.
func TestBuilderOwnsOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*kitConfigMap](), kinds.ConfigMap); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(reflect.TypeFor[*builderSecret](), kinds.Secret); err != nil {
		t.Fatal(err)
	}
	m, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Kinds: reg, Logger: slog.New(slog.DiscardHandler),
		InformerOptions: informer.FactoryOptions{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	secrets := controller.Owned[*builderSecret]()
	seen := make(chan int, 100)
	_, err = controller.NewBuilder(m, "secret-per-configmap").
		For(controller.Primary[*kitConfigMap]()).
		Owns(secrets).
		Build(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			cm, err := client.TypedFor[*kitConfigMap](m.Client()).Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				return controller.Result{}, nil
			} else if err != nil {
				return controller.Result{}, err
			}
			kids, err := secrets.ChildrenOf(cm)
			if err != nil {
				return controller.Result{}, err
			}
			seen <- len(kids)
			if len(kids) > 0 {
				return controller.Result{}, nil
			}
			s := &builderSecret{ObjectMeta: meta.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + "-secret"}, StringData: map[string]string{"k": "v"}}
			if err := controllerutil.SetControllerReferenceWithOptions(cm, s, controllerutil.OwnerReferenceOptions{Registry: reg}); err != nil {
				return controller.Result{}, err
			}
			_, err = client.TypedFor[*builderSecret](m.Client()).Create(ctx, s, client.CreateOptions{})
			return controller.Result{}, err
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	do(t, c, "POST", nsPath(ns, "configmaps"), configMap("owner", map[string]string{"a": "b"}), 201, nil)
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case n := <-seen:
			if n == 1 {
				return // the Secret's event reconciled its owner, which found it
			}
		case err := <-done:
			t.Fatalf("the manager stopped: %v", err)
		case <-deadline:
			t.Fatal("the owner never saw its Secret through ChildrenOf")
		}
	}
}

// A kind registered with a typo (or the wrong scope) fails the controller at Start with the
// kind the server serves.
func TestBuilderKindMismatchOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	reg := kinds.NewRegistry()
	typo := kinds.ConfigMap
	typo.Kind = "Configmap"
	if err := reg.Register(reflect.TypeFor[*kitConfigMap](), typo); err != nil {
		t.Fatal(err)
	}
	m, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Kinds: reg, Logger: slog.New(slog.DiscardHandler),
		InformerOptions: informer.FactoryOptions{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	err = controller.NewBuilder(m, "typo").
		For(controller.Primary[*kitConfigMap]()).
		Complete(controller.ReconcilerFunc(func(context.Context, controller.Request) (controller.Result, error) {
			return controller.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = m.Start(ctx)
	var km *controller.KindMismatchError
	if !errors.As(err, &km) || km.Served == nil || km.Served.Kind != "ConfigMap" || !errors.Is(err, controller.ErrKindMismatch) {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("Start: %v", err)
}
