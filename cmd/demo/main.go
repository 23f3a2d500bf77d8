// Command demo runs the configmap-replicator example controller (examples/configmapreplicator)
// against an in-process API server (apitest), or against a real cluster with
// --kubeconfig=path, drives a short scripted workload, prints what each stage of informerkit
// did with every event, and checks the result:
//
//	go run ./cmd/demo                         # embedded API server, nothing else needed
//	go run ./cmd/demo --kubeconfig ~/.kube/config
//
// Against a real cluster it needs rights to create namespaces, ConfigMaps, Leases and a
// CustomResourceDefinition; it refuses to run if one of its namespaces already exists, and
// deletes everything it created when it ends. It exits 0 when every step converged, 1 with a
// message saying which step did not and what it saw, 2 on bad flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "demo: FAILED")
	}
	os.Exit(code)
}
