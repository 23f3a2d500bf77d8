// Command controller-manager runs informerkit's example controllers the way
// kube-controller-manager runs its own: named controllers, chosen with --controllers, on one
// manager with leader election, /healthz, /readyz (an entry per controller) and /metrics.
//
//	go run ./cmd/controller-manager --apitest                 # in-process API server with the CRDs and a sample MiniDeployment
//	go run ./cmd/controller-manager --kubeconfig ~/.kube/config --controllers='*,-configmap-replicator'
//
// On a real cluster, install the CRDs first (kubectl apply -f examples/deployment/crd.yaml)
// and the roles (kubectl apply -f cmd/controller-manager/rbac.yaml); a controller whose CRD
// is missing is skipped, and its /readyz entry says which resource is not served. At start,
// a missing permission is one error naming the verb and the resource.
//
// -rbac writes the roles of this program's controllers (the examples'), from what they
// declare, without a server: it is how rbac.yaml and the examples' rbac.yaml are made, not
// a tool for other programs. A program of your own prints its roles with Manager.Roles once
// its controllers are set up (examples/widgets/cmd/widgets -rbac does).
//
//go:generate go run . -rbac rbac.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/examples/configmapreplicator"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/meta"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Descriptors are the controllers of this controller manager.
func Descriptors() []runner.Descriptor {
	return []runner.Descriptor{
		deployment.Descriptor(),
		{Name: "configmap-replicator", Resources: []meta.GroupVersionResource{configmapreplicator.ReplicationGVR},
			Init: func(_ context.Context, cc runner.ControllerContext) (bool, error) {
				_, err := configmapreplicator.Setup(cc.Manager, configmapreplicator.Options{Logger: cc.Logger})
				return err == nil, err
			}},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)")
	embedded := fs.Bool("apitest", false, "run against an in-process API server with the example CRDs and one MiniDeployment")
	leaderElect := fs.Bool("leader-elect", true, "run the controllers only on the replica holding the Lease")
	httpAddr := fs.String("http-address", "127.0.0.1:10257", "address of /healthz, /readyz and /metrics (empty: none)")
	namespace := fs.String("namespace", "", "namespace of the leader election Lease and, with -rbac, of the service account (default: the kubeconfig's, else default)")
	rbacOut := fs.String("rbac", "", "write the RBAC roles this program's enabled controllers need to this file (- for standard output) and exit, without a server (your own program: Manager.Roles)")
	serviceAccount := fs.String("service-account", Name, "with -rbac: the service account the roles are bound to (empty: no bindings)")
	rbacName := fs.String("rbac-name", Name, "with -rbac: the name of the roles and bindings")
	var enabled []string
	descs := Descriptors()
	runner.ControllersVar(fs, &enabled, descs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if *rbacOut != "" {
		return printRBAC(ctx, rbacOptions{out: *rbacOut, name: *rbacName, namespace: *namespace, serviceAccount: *serviceAccount,
			leaderElect: *leaderElect, enabled: enabled}, descs, stdout, stderr)
	}

	var cfg *apiclient.Config
	if *embedded {
		srv, err := sampleServer()
		if err != nil {
			fmt.Fprintln(stderr, "controller-manager:", err)
			return 1
		}
		defer srv.Close()
		cfg = srv.Config()
		// kubectl works against it: scale the sample, delete its Pods, watch the events.
		dir, err := os.MkdirTemp("", "controller-manager-")
		if err == nil {
			defer os.RemoveAll(dir)
			if err = srv.WriteKubeconfig(filepath.Join(dir, "kubeconfig")); err == nil {
				log.Info("in-process API server; try: kubectl --kubeconfig " + filepath.Join(dir, "kubeconfig") +
					" get minideployments,pods,events")
			}
		}
	} else {
		var err error
		if cfg, err = apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: *kubeconfig}); err != nil {
			fmt.Fprintln(stderr, "controller-manager:", err)
			return 1
		}
	}
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{Logger: log, HTTPAddress: *httpAddr,
		LeaderElection: *leaderElect, LeaderElectionID: Name, LeaderElectionNamespace: *namespace})
	if err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 1
	}
	r, err := runner.New(mgr, descs, runner.Options{Controllers: enabled})
	if err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 2
	}
	if err := r.Run(ctx); err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 1
	}
	return 0
}

// Name is the controller manager's name: its Lease and its RBAC roles.
const Name = "informerkit-controller-manager"

// rbacOptions are the flags of -rbac.
type rbacOptions struct {
	out, name, namespace, serviceAccount string
	leaderElect                          bool
	enabled                              []string
}

// printRBAC writes the ClusterRole and Role (with bindings to o.serviceAccount) that the
// enabled controllers need, from what they declare (runner.Runner.Permissions), to o.out.
func printRBAC(ctx context.Context, o rbacOptions, descs []runner.Descriptor, stdout, stderr io.Writer) int {
	namespace := o.namespace
	if namespace == "" {
		namespace = "default"
	}
	// The Manager is only set up, never started: its config points nowhere.
	mgr, err := controller.NewManager(&apiclient.Config{Host: "http://127.0.0.1:1"}, controller.ManagerOptions{
		Logger: slog.New(slog.DiscardHandler), LeaderElection: o.leaderElect, LeaderElectionID: Name, LeaderElectionNamespace: namespace})
	if err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 1
	}
	r, err := runner.New(mgr, descs, runner.Options{Controllers: o.enabled, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 2
	}
	rules, err := r.Permissions(ctx)
	if err == nil {
		var y []byte
		y, err = rbac.Manifest(o.name, rules, rbac.ManifestOptions{ServiceAccount: o.serviceAccount, ServiceAccountNamespace: namespace})
		if err == nil {
			y = append([]byte(rbacHeader), y...)
			if o.out == "-" {
				_, err = stdout.Write(y)
			} else {
				err = os.WriteFile(o.out, y, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "controller-manager:", err)
		return 1
	}
	return 0
}

// rbacHeader starts every RBAC manifest -rbac writes.
const rbacHeader = "# Generated by cmd/controller-manager -rbac from what the controllers declare. DO NOT EDIT.\n"

// sampleServer is an in-process API server with both CRDs installed and a MiniDeployment
// of three replicas.
func sampleServer() (*apitest.Server, error) {
	srv := apitest.NewServer()
	for _, crd := range [][]byte{deployment.CRDYAML, configmapreplicator.CRDYAML} {
		if err := srv.AddCRD(crd); err != nil {
			srv.Close()
			return nil, err
		}
	}
	if err := createSample(srv); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

func createSample(srv *apitest.Server) error {
	_, err := srv.Create(deployment.DeploymentKind.Resource, map[string]any{"apiVersion": deployment.DeploymentKind.APIVersion(), "kind": deployment.DeploymentKind.Kind,
		"metadata": map[string]any{"namespace": "default", "name": "web"},
		"spec": map[string]any{"replicas": 3, "template": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}})
	return err
}
