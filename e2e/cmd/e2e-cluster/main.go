// Command e2e-cluster starts the e2e cluster (etcd + kube-apiserver, see package cluster)
// for poking at by hand, prints how to reach it, and stops it on Ctrl-C or SIGTERM.
//
//	cd e2e && go run ./cmd/e2e-cluster
//	export KUBECONFIG=/tmp/informerkit-e2e-.../kubeconfig   # as printed
//	kubectl get namespaces
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/informerkit/informerkit/e2e/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-cluster:", err)
		os.Exit(1)
	}
	fmt.Printf(`kube-apiserver %s (etcd %s)
export KUBECONFIG=%s
token:  %s
CA:     %s/ca.crt
logs:   %s  %s
curl --cacert %s/ca.crt -H "Authorization: Bearer %s" %s/version
Ctrl-C to stop.
`, c.URL, c.EtcdEndpoint, c.KubeconfigPath, c.Token, c.WorkDir, c.APIServerLog, c.EtcdLog,
		c.WorkDir, c.Token, c.URL)
	<-ctx.Done()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-cluster:", err)
	}
	fmt.Printf("stopped; logs kept in %s\n", c.WorkDir)
}
