// Command crsuites runs controller-runtime's own envtest-backed test suites, unchanged,
// against apitest and against the real kube-apiserver, one fresh server per package, and
// compares them spec by spec (make crsuites; docs/apitest.md, "controller-runtime suites").
//
//	cd compat && go run ./cmd/crsuites -servers apitest,kube-apiserver -docs ../docs/apitest.md
//	cd compat && go run ./cmd/crsuites -servers apitest -check     # what CI runs
//
// It fetches sigs.k8s.io/controller-runtime at -version from the Go module proxy (go mod
// download), copies it out of the read-only module cache into -work, builds each package's
// test binary there with controller-runtime's own go.mod, and runs it with
// USE_EXISTING_CLUSTER=true and a kubeconfig: envtest then uses the server it is given. The
// apitest server is `apitest serve` (cmd/apitest of the repository); the real one is the e2e
// cluster (kube-apiserver and etcd of make e2e-build). Specs are counted from ginkgo's JSON
// report, plain Go tests from test2json; results-<server>.json in -work keeps every name
// and failure message. -check fails when a spec or test fails on apitest that
// exceptions.json does not list with its reason.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// defaultPackages are controller-runtime's packages whose tests run against an API server.
var defaultPackages = []string{
	"pkg/client", "pkg/cache", "pkg/manager", "pkg/internal/controller",
	"pkg/controller/controllerutil", "pkg/builder", "pkg/handler", "pkg/controller",
	"pkg/source", "pkg/cluster", "pkg/reconcile", "pkg/recorder", "pkg/internal/recorder",
	"pkg/client/apiutil", "pkg/metrics/filters",
}

// Server names, as -servers takes them and the table shows them.
const (
	serverAPITest = "apitest"
	serverReal    = "kube-apiserver"
)

type config struct {
	version    string
	work       string
	repo       string // the repository root (cmd/apitest, bin/)
	binDir     string // kube-apiserver and etcd
	servers    []string
	packages   []string
	run        string // -ginkgo.focus
	timeout    time.Duration
	docs       string
	exceptions string
	check      bool
	keepLogs   bool
	reportOnly bool
	envtest    bool // KUBEBUILDER_ASSETS instead of USE_EXISTING_CLUSTER
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "crsuites:", err)
		return 2
	}
	exc, err := loadExceptions(cfg.exceptions)
	if err != nil {
		fmt.Fprintln(stderr, "crsuites:", err)
		return 1
	}
	results := map[string]*serverResults{}
	if cfg.reportOnly {
		for _, srv := range cfg.servers {
			if results[srv], err = loadResults(cfg.resultsFile(srv)); err != nil {
				fmt.Fprintln(stderr, "crsuites:", err)
				return 1
			}
		}
	} else {
		h := &harness{cfg: cfg, out: stdout}
		if err := h.prepare(ctx); err != nil {
			fmt.Fprintln(stderr, "crsuites:", err)
			return 1
		}
		for _, srv := range cfg.servers {
			r, err := h.runServer(ctx, srv)
			if err != nil {
				fmt.Fprintln(stderr, "crsuites:", err)
				return 1
			}
			results[srv] = r
			if err := r.save(cfg.resultsFile(srv)); err != nil {
				fmt.Fprintln(stderr, "crsuites:", err)
				return 1
			}
		}
	}
	tab := buildTable(cfg.version, cfg.packages, results, exc)
	fmt.Fprint(stdout, tab.markdown())
	if cfg.docs != "" {
		if err := replaceBetweenMarkers(cfg.docs, tab.markdown()); err != nil {
			fmt.Fprintln(stderr, "crsuites:", err)
			return 1
		}
	}
	if cfg.check {
		if msgs := check(results[serverAPITest], results[serverReal], exc); len(msgs) > 0 {
			fmt.Fprintf(stderr, "crsuites: %d failures on apitest that %s does not list:\n", len(msgs), cfg.exceptions)
			for _, m := range msgs {
				fmt.Fprintln(stderr, "  "+m)
			}
			return 1
		}
		for _, m := range staleExceptions(results[serverAPITest], exc, cfg.packages) {
			fmt.Fprintln(stderr, "crsuites: note: "+m)
		}
	}
	return 0
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("crsuites", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.version, "version", "v0.25.2", "the controller-runtime release whose suites run")
	fs.StringVar(&cfg.work, "work", ".crsuites", "the work directory: the module's copy, test binaries, reports, logs")
	fs.StringVar(&cfg.repo, "repo", "..", "the repository root (cmd/apitest is built from it)")
	fs.StringVar(&cfg.binDir, "bin", "", "kube-apiserver and etcd (default: $E2E_BIN_DIR, else <repo>/bin)")
	servers := fs.String("servers", serverAPITest+","+serverReal, "the servers to run the suites against, comma-separated")
	pkgs := fs.String("packages", strings.Join(defaultPackages, ","), "controller-runtime's packages to run, comma-separated")
	fs.StringVar(&cfg.run, "focus", "", "run only the specs this regular expression matches (ginkgo's -focus), to study a failure")
	fs.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "the time one package's tests may take")
	fs.StringVar(&cfg.docs, "docs", "", "write the table into this markdown file between its crsuites markers (-mode existing, both servers, every package)")
	fs.StringVar(&cfg.exceptions, "exceptions", "cmd/crsuites/exceptions.json", "the specs that cannot pass on apitest, with their reasons")
	fs.BoolVar(&cfg.check, "check", false, "exit 1 if a spec fails on apitest that the exceptions do not list")
	fs.BoolVar(&cfg.keepLogs, "keep-logs", false, "keep the servers' work directories")
	mode := fs.String("mode", "existing", "existing: the harness starts each server and the suites use it (USE_EXISTING_CLUSTER); envtest: the suites start their own through KUBEBUILDER_ASSETS (the real binaries, or apitest's drop-in)")
	fs.BoolVar(&cfg.reportOnly, "report-only", false, "run nothing: report (table, -docs, -check) from the results-<server>.json files of -work")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch *mode {
	case "existing":
	case "envtest":
		cfg.envtest = true
	default:
		return cfg, fmt.Errorf("-mode %q: want existing or envtest", *mode)
	}
	for s := range strings.SplitSeq(*servers, ",") {
		if s != serverAPITest && s != serverReal {
			return cfg, fmt.Errorf("-servers: unknown server %q (want %s or %s)", s, serverAPITest, serverReal)
		}
		cfg.servers = append(cfg.servers, s)
	}
	cfg.packages = strings.Split(*pkgs, ",")
	if cfg.check && !contains(cfg.servers, serverAPITest) {
		return cfg, fmt.Errorf("-check needs -servers to include %s", serverAPITest)
	}
	if cfg.docs != "" && (cfg.envtest || len(cfg.servers) != 2 || cfg.run != "" || *pkgs != strings.Join(defaultPackages, ",")) {
		return cfg, fmt.Errorf("-docs needs the whole run: both servers, every package, no -focus")
	}
	var err error
	if cfg.work, err = filepath.Abs(cfg.work); err != nil {
		return cfg, err
	}
	if cfg.repo, err = filepath.Abs(cfg.repo); err != nil {
		return cfg, err
	}
	if cfg.binDir == "" {
		cfg.binDir = os.Getenv("E2E_BIN_DIR")
	}
	if cfg.binDir == "" {
		cfg.binDir = filepath.Join(cfg.repo, "bin")
	}
	cfg.binDir, err = filepath.Abs(cfg.binDir)
	return cfg, err
}

// resultsFile is where a server's results are kept.
func (c config) resultsFile(srv string) string {
	if c.envtest {
		srv += "-envtest"
	}
	return filepath.Join(c.work, "results-"+srv+".json")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
