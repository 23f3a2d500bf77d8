// Command apitest runs package apitest's in-process Kubernetes API server as a program: for
// any client (serve), and as a drop-in for envtest's kube-apiserver and etcd binaries.
//
//	apitest serve -kubeconfig kc -crds config/crd -nodes 3   # until Ctrl-C
//	apitest install ./testbin                                # kube-apiserver and etcd in ./testbin
//	KUBEBUILDER_ASSETS=$PWD/testbin go test ./...            # envtest starts apitest
//
// Run under the name kube-apiserver it accepts the kube-apiserver flags envtest passes
// (--secure-port, --bind-address, --cert-dir, --client-ca-file, ...): it serves TLS with the
// certificate of --cert-dir (or --tls-cert-file) and authenticates client certificates
// signed by --client-ca-file as their subject's user and groups, as the kube-apiserver does.
// Run as etcd it is a stub that answers /health on --listen-client-urls: apitest keeps its
// objects in the kube-apiserver process. docs/apitest.md, "envtest drop-in", has the details.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr, stop))
}

// run dispatches on the name the program was started as, then on the subcommand. stop
// delivers the signals that end a server.
func run(name string, args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	name = strings.TrimSuffix(name, ".exe")
	switch name {
	case "kube-apiserver":
		return runKubeAPIServer(args, stdout, stderr, stop)
	case "etcd":
		return runEtcd(args, stdout, stderr, stop)
	}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stdout, stderr, stop)
	case "install":
		return runInstall(args[1:], stdout, stderr)
	case "kube-apiserver":
		return runKubeAPIServer(args[1:], stdout, stderr, stop)
	case "etcd":
		return runEtcd(args[1:], stdout, stderr, stop)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "apitest: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  apitest serve [flags]          serve until interrupted (apitest serve -h for the flags)
  apitest install DIR            put kube-apiserver and etcd (this program) in DIR, for KUBEBUILDER_ASSETS
  apitest kube-apiserver [flags] what DIR/kube-apiserver runs (kube-apiserver's flags)
  apitest etcd [flags]           what DIR/etcd runs: a stub answering /health
`)
}
