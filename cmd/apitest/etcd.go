package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// etcdFlags are the etcd flags the stub knows: those envtest v0.25 passes and those of a
// single-member command line. Only --listen-client-urls changes what it does.
var etcdFlags = []flagSpec{
	{name: "listen-client-urls", help: "the http:// URLs to answer /health on (comma-separated; default http://localhost:2379)"},
	{name: "advertise-client-urls", help: "the client URLs advertised", ignored: true},
	{name: "listen-peer-urls", help: "the peer URLs", ignored: true},
	{name: "initial-advertise-peer-urls", help: "the peer URLs advertised", ignored: true},
	{name: "initial-cluster", help: "the initial members", ignored: true},
	{name: "initial-cluster-state", help: "new or existing", ignored: true},
	{name: "name", help: "the member's name", ignored: true},
	{name: "data-dir", help: "the data directory (the stub stores nothing)", ignored: true},
	{name: "unsafe-no-fsync", boolean: true, help: "do not fsync", ignored: true},
	{name: "log-level", help: "log level", ignored: true},
	{name: "version", boolean: true, help: "print the version and exit"},
	{name: "help", boolean: true, help: "print this help"},
}

// etcdVersion is what --version and /version report: the etcd of the e2e reference
// (e2e/tools/go.mod).
const etcdVersion = "3.7.3"

// runEtcd is the etcd stub: envtest starts etcd before kube-apiserver and waits for its
// /health; apitest keeps its objects in the kube-apiserver process, so the stub only says
// it is healthy, until a signal.
func runEtcd(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	p, err := parseFlags(args, etcdFlags)
	if err != nil {
		fmt.Fprintln(stderr, "etcd:", err)
		return 1
	}
	if p.has("help") {
		printHelp(stdout, "etcd", "apitest as etcd: a stub that answers /health (apitest's kube-apiserver keeps the objects).", etcdFlags)
		return 0
	}
	if p.has("version") {
		fmt.Fprintf(stdout, "etcd Version: %s\n", etcdVersion)
		return 0
	}
	for _, f := range p.unknown {
		fmt.Fprintf(stderr, "apitest etcd: ignoring flag %s (not modelled)\n", f)
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for raw := range strings.SplitSeq(p.get("listen-client-urls", "http://localhost:2379"), ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Scheme != "http" || u.Host == "" {
			fmt.Fprintf(stderr, "etcd: --listen-client-urls %q: the stub serves http://host:port URLs\n", raw)
			return 1
		}
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			fmt.Fprintln(stderr, "etcd:", err)
			return 1
		}
		lns = append(lns, ln)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"health":"true","reason":""}`)
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"etcdserver":%q,"etcdcluster":"3.7.0"}`, etcdVersion)
	})
	srv := &http.Server{Handler: mux}
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintln(stderr, "etcd:", err)
			}
		})
		fmt.Fprintf(stderr, "apitest etcd stub serving http://%s/health\n", ln.Addr())
	}
	<-stop
	_ = srv.Shutdown(context.Background())
	wg.Wait()
	lns = nil
	return 0
}
