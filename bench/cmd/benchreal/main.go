// Command benchreal measures informerkit's informer against client-go's on a real
// kube-apiserver (make bench-real). Subcommands:
//
//	benchreal record -kubeconfig K -out DIR   record JSON bodies of a seeded fleet (testdata)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreal record|run|child ...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "record":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
		out := fs.String("out", "", "directory to write the bodies to")
		fs.Parse(args)
		cfg, cerr := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if cerr != nil {
			err = cerr
			break
		}
		cfg.QPS, cfg.Burst = 500, 1000
		err = record(ctx, cfg, *out)
	default:
		err = fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreal:", err)
		os.Exit(1)
	}
}
