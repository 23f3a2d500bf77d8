// Command nodepool runs the NodePool controller with leader election. With -rbac it prints
// the roles it needs (Manager.Roles) and exits, without a server.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/examples/nodepool"
)

// namespace holds the controller's Lease and service account.
const namespace = "nodepool-system"

func main() {
	printRBAC := flag.Bool("rbac", false, "print the RBAC roles the controller needs and exit")
	flag.Parse()
	if err := run(*printRBAC, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nodepool:", err)
		os.Exit(1)
	}
}

func run(printRBAC bool, stdout io.Writer) error {
	cfg := &apiclient.Config{Host: "http://127.0.0.1:1"} // -rbac needs no server
	if !printRBAC {
		var err error
		if cfg, err = apiclient.LoadConfig(); err != nil { // KUBECONFIG, ~/.kube/config or in-cluster
			return err
		}
	}
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
		LeaderElection: true, LeaderElectionID: nodepool.Name, LeaderElectionNamespace: namespace})
	if err != nil {
		return err
	}
	if err := nodepool.Setup(mgr); err != nil {
		return err
	}
	if printRBAC {
		y, err := mgr.Roles(nodepool.Name, rbac.ManifestOptions{ServiceAccount: nodepool.Name, ServiceAccountNamespace: namespace})
		if err != nil {
			return err
		}
		_, err = stdout.Write(y)
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return mgr.Start(ctx) // fails at once, naming the verb and resource, if a role is missing
}
