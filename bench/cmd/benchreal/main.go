// Command benchreal measures informerkit's informer against client-go's on a real
// kube-apiserver (make bench-real): it starts the e2e cluster (kube-apiserver v1.36.3 and
// etcd v3.6.8 from bin/), seeds a fleet of Deployments with their pods and configmaps
// (bench/internal/fleet), then runs each informer in a process of its own, interleaved over
// several rounds, and prints the medians and ratios of time to sync, process CPU time to
// sync, live heap per cached object, and events per second through a handler for a burst of
// updates (replayed from the server's watch cache as fast as the client takes them).
//
//	benchreal run [-pods N] [-configmaps M] [-burst B] [-rounds R] [-bindir DIR]
//	benchreal child ...                       one measuring process (run starts them)
//	benchreal record -kubeconfig K -out DIR   record JSON bodies of a seeded fleet (testdata)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/informerkit/informerkit/bench/internal/fleet"
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
	case "run":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		a := runArgs{Out: os.Stdout}
		fs.StringVar(&a.BinDir, "bindir", os.Getenv("E2E_BIN_DIR"), "directory of kube-apiserver and etcd (default: the nearest bin/)")
		fs.StringVar(&a.Kubeconfig, "kubeconfig", "", "use this (empty) cluster instead of starting one")
		fs.IntVar(&a.Pods, "pods", 5000, "pods in the fleet")
		fs.IntVar(&a.ConfigMaps, "configmaps", 0, "configmaps (default: half the pods)")
		fs.IntVar(&a.Apps, "applications", -1, "custom resources (Applications; default: half the pods, 0 for none)")
		fs.IntVar(&a.Burst, "burst", 0, "updates replayed in the events phase (default: the pods, at most 5000)")
		fs.IntVar(&a.Rounds, "rounds", 3, "interleaved rounds")
		fs.StringVar(&a.Chart, "chart", "", "write an SVG chart of informerkit against client-go to this file")
		fs.IntVar(&a.Workers, "workers", 8, "parallel writers while seeding")
		impls := fs.String("impls", "informerkit,client-go,informerkit-json", "implementations measured, comma-separated (informerkit-json: informerkit over JSON)")
		fs.Parse(args)
		a.Impls = strings.Split(*impls, ",")
		if a.ConfigMaps == 0 {
			a.ConfigMaps = a.Pods / 2
		}
		if a.Apps < 0 {
			a.Apps = a.Pods / 2
		}
		if a.Burst == 0 {
			a.Burst = min(a.Pods, 5000)
		}
		err = run(ctx, a)
	case "seed":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
		pods := fs.Int("pods", 5000, "pods in the fleet")
		cms := fs.Int("configmaps", 0, "configmaps (default: half the pods)")
		apps := fs.Int("applications", 0, "custom resources (Applications)")
		fs.Parse(args)
		if *cms == 0 {
			*cms = *pods / 2
		}
		cs, cerr := writerClientset(*kubeconfig)
		if cerr != nil {
			err = cerr
			break
		}
		if _, err = fleet.Seed(ctx, cs, *pods, *cms, 8, func(s string) { fmt.Println("seeded", s) }); err != nil || *apps == 0 {
			break
		}
		dyn, derr := dynamicClient(*kubeconfig)
		if derr != nil {
			err = derr
			break
		}
		err = fleet.SeedApplications(ctx, dyn, *apps, 8, func(s string) { fmt.Println("seeded", s) })
	case "burst":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
		n := fs.Int("n", 2000, "updates")
		round := fs.Int("round", 0, "round number (part of the annotation's value)")
		fs.Parse(args)
		cs, cerr := writerClientset(*kubeconfig)
		if cerr != nil {
			err = cerr
			break
		}
		var rv string
		if rv, err = burst(ctx, cs, *n, *round, "manual"); err == nil {
			fmt.Println(rv)
		}
	case "child":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		var a childArgs
		fs.StringVar(&a.CPUProfile, "cpuprofile", "", "write a CPU profile of the sync to this file")
		fs.StringVar(&a.MemProfile, "memprofile", "", "write a heap profile (allocations included) at the end of the sync to this file")
		fs.StringVar(&a.EventsCPUProfile, "events-cpuprofile", "", "write a CPU profile of the events phase to this file")
		fs.BoolVar(&a.StdJSON, "stdjson", false, "informerkit: decode with encoding/json (Config.JSONDecoder JSONStandard)")
		fs.BoolVar(&a.Relist, "relist", false, "after the sync, force a relist and measure its peak heap (no events phase)")
		fs.IntVar(&a.Steady, "steady", 0, "with -relist: after the sync, wait for this many updates (which the parent writes) and measure the heap meanwhile")
		fs.BoolVar(&a.NoSync, "nosync", false, "skip the sync phase (only the events phase, for profiles and server CPU)")
		fs.BoolVar(&a.NoSharing, "nosharing", false, "informerkit: structural sharing off")
		fs.StringVar(&a.Watch, "watch", "auto", "informerkit's watch protocol: auto, chunked or websocket")
		fs.StringVar(&a.Impl, "impl", "", "informerkit, informerkit-json, client-go or client-go-typed (applications)")
		fs.StringVar(&a.Kind, "kind", "pods", "pods, configmaps or applications")
		fs.StringVar(&a.Obj, "obj", "full", "full, partial or floor (pods: the key and resourceVersion only)")
		fs.StringVar(&a.Kubeconfig, "kubeconfig", "", "kubeconfig")
		fs.IntVar(&a.Expect, "expect", 0, "objects expected in the cache")
		fs.StringVar(&a.ReplayFrom, "replay-from", "", "resourceVersion to replay events from")
		fs.IntVar(&a.Replay, "replay", 0, "events to replay")
		fs.Parse(args)
		err = child(ctx, a)
	default:
		err = fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreal:", err)
		os.Exit(1)
	}
}
