package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/metrics"
	cmr "github.com/informerkit/informerkit/examples/configmapreplicator"
	"github.com/informerkit/informerkit/meta"
)

// The demo's objects. Everything it creates lives in these namespaces (or is the
// replication and, on a cluster without it, the CRD).
const (
	nsSource    = "demo-src"
	nsA         = "demo-a"
	nsB         = "demo-b"
	nsC         = "demo-c"
	sourceName  = "settings"
	replication = "demo-settings"
	leaseName   = "configmap-replicator"
)

var demoNamespaces = []string{nsSource, nsA, nsB, nsC}

// relevant keeps the trace to the demo's objects on a busy cluster.
func relevant(namespace, name string) bool {
	if namespace != "" {
		return strings.HasPrefix(namespace, "demo-")
	}
	return strings.HasPrefix(name, "demo-")
}

// printer writes the trace: one line per stage, timed from the start of the current step.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	quiet bool
}

func (p *printer) line(stage, msg string) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  %+8.3fs  %-10s %s\n", time.Since(p.start).Seconds(), stage, msg)
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) restart() {
	p.mu.Lock()
	p.start = time.Now()
	p.mu.Unlock()
}

// run is the demo; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "run against the cluster of this kubeconfig instead of an embedded API server")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	stepTimeout := fs.Duration("step-timeout", 30*time.Second, "how long each step may take to converge")
	quiet := fs.Bool("quiet", false, "print only the steps and their results, not the trace")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected arguments %q\n", fs.Args())
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	p := &printer{w: stdout, start: time.Now(), quiet: *quiet}
	d := &demo{p: p, stepTimeout: *stepTimeout, logOut: stderr}
	if err := d.run(ctx, *kubeconfig); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	}
	return 0
}

type demo struct {
	p           *printer
	stepTimeout time.Duration
	logOut      io.Writer
	// prepare, if set, is called with the embedded server before anything runs (tests
	// inject faults with it).
	prepare func(*apitest.Server) error

	client       *apiclient.Client // the script's own client (not traced)
	namespaces   *apiclient.Resource[*cmr.Namespace]
	configMaps   *apiclient.Resource[*cmr.ConfigMap]
	replications *apiclient.Resource[*cmr.ConfigMapReplication]
}

// run is the whole demo: connect, set up the example's objects, start the manager with the
// replicator, run the steps, print the metrics, and clean up whatever happens.
func (d *demo) run(ctx context.Context, kubeconfig string) (err error) {
	began := time.Now()
	cfg, closeServer, err := d.connect(kubeconfig)
	if err != nil {
		return err
	}
	defer closeServer()
	if d.client, err = apiclient.New(cfg); err != nil {
		return err
	}
	defer d.client.Close()
	d.namespaces = apiclient.NewResource[*cmr.Namespace](d.client, cmr.NamespaceGVR)
	d.configMaps = apiclient.NewResource[*cmr.ConfigMap](d.client, cmr.ConfigMapGVR)
	d.replications = apiclient.NewResource[*cmr.ConfigMapReplication](d.client, cmr.ReplicationGVR)

	var crdCreated bool
	if kubeconfig != "" {
		if crdCreated, err = d.prepareCluster(ctx); err != nil {
			return err
		}
	}
	// Clean up whatever happens (a fresh context: ctx may be what ended).
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if cerr := d.cleanup(cctx, crdCreated); cerr != nil {
			d.p.say("cleanup: %v", cerr)
			if err == nil {
				err = cerr
			}
		}
	}()
	if err := d.createObjects(ctx); err != nil {
		return err
	}

	mgr, ctl, err := d.newManager(cfg)
	if err != nil {
		return err
	}
	d.p.say("\nstartup: the manager starts three shared informers (each reflector lists, then watches), waits for\n" +
		"their caches to sync, wins the Lease, then starts the controller. Only the demo's objects are traced.")
	d.p.restart()
	mctx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mctx) }()
	defer func() {
		stopMgr()
		if merr := <-mgrDone; merr != nil && err == nil {
			err = fmt.Errorf("manager: %w", merr)
		}
	}()
	if err := d.waitStarted(ctx, mgr, ctl, mgrDone); err != nil {
		return err
	}

	for i, s := range d.steps() {
		if err := d.runStep(ctx, i+1, s); err != nil {
			return err
		}
	}
	d.p.say("\nmetrics (from the manager's /metrics registry):")
	d.printMetrics(mgr.Registry())
	d.printEventLatency(ctl, mgr.Registry())
	stopMgr()
	if merr := <-mgrDone; merr != nil {
		return fmt.Errorf("manager: %w", merr)
	}
	mgrDone <- nil
	d.p.say("\ninformerkit demo: OK — %d steps converged in %v", len(d.steps()), time.Since(began).Round(time.Millisecond))
	return nil
}

// connect returns the configuration of the API server the demo runs against: an embedded
// one (apitest, with the example's CRD) without a kubeconfig, closed by closeServer, or the
// kubeconfig's.
func (d *demo) connect(kubeconfig string) (cfg *apiclient.Config, closeServer func(), err error) {
	if kubeconfig != "" {
		cfg, err = apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kubeconfig})
		if err != nil {
			return nil, nil, err
		}
		d.p.say("informerkit demo: the configmap-replicator example against %s (%s)", cfg.Host, kubeconfig)
		return cfg, func() {}, nil
	}
	srv, err := apitest.Start(apitest.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("starting the embedded API server: %w", err)
	}
	if err := srv.AddCRD(cmr.CRDYAML); err != nil {
		srv.Close()
		return nil, nil, err
	}
	if d.prepare != nil {
		if err := d.prepare(srv); err != nil {
			srv.Close()
			return nil, nil, err
		}
	}
	d.p.say("informerkit demo: the configmap-replicator example against an embedded API server (apitest) at %s", srv.URL)
	return srv.Config(), srv.Close, nil
}

// prepareCluster checks that a real cluster has none of the demo's names and installs the
// CRD if it is missing, reporting whether it did (cleanup then removes it).
func (d *demo) prepareCluster(ctx context.Context) (crdCreated bool, err error) {
	if err := d.preflight(ctx); err != nil {
		return false, err
	}
	if crdCreated, err = cmr.InstallCRD(ctx, d.client); err != nil {
		return false, err
	}
	if crdCreated {
		d.p.say("installed CustomResourceDefinition %s", cmr.CRDName)
	}
	return crdCreated, nil
}

// createObjects creates the demo's namespaces (two of them labelled for replication) and
// the source ConfigMap.
func (d *demo) createObjects(ctx context.Context) error {
	d.p.say("\nThe example keeps a copy of a source ConfigMap in every namespace labelled %s=true,\n"+
		"as asked by a cluster-scoped ConfigMapReplication that owns the copies and records them in its status.\n", cmr.LabelReplicateInto)
	d.p.say("setup: namespaces %s (source), %s and %s (labelled), %s (not labelled); ConfigMap %s/%s",
		nsSource, nsA, nsB, nsC, nsSource, sourceName)
	for _, ns := range demoNamespaces {
		labels := map[string]string{"app.kubernetes.io/created-by": "informerkit-demo"}
		if ns == nsA || ns == nsB {
			labels[cmr.LabelReplicateInto] = "true"
		}
		if _, err := d.namespaces.Create(ctx, &cmr.Namespace{ObjectMeta: meta.ObjectMeta{Name: ns, Labels: labels}}, apiclient.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	return d.putSource(ctx, "blue")
}

// newManager returns the manager (one client and one informer factory, traced on the wire,
// with leader election) and the replicator set up on it.
func (d *demo) newManager(cfg *apiclient.Config) (*controller.Manager, *controller.Controller, error) {
	mcfg := *cfg
	mcfg.WatchProtocol = apiclient.WatchChunked // the wire tracer reads chunked streams
	mcfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &wireTracer{base: rt, p: d.p} }
	logger := slog.New(slog.NewTextHandler(d.logOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mgr, err := controller.NewManager(&mcfg, controller.ManagerOptions{
		Logger:                  logger,
		LeaderElection:          true,
		LeaderElectionID:        leaseName,
		LeaderElectionNamespace: nsSource,
		GracefulShutdownTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, nil, err
	}
	ctl, err := cmr.Setup(mgr, cmr.Options{Trace: d.p.line, Relevant: relevant})
	if err != nil {
		return nil, nil, err
	}
	return mgr, ctl, nil
}

// waitStarted waits until the manager leads with synced caches and the controller has
// started, tracing both. An error the manager stopped with is put back into mgrDone.
func (d *demo) waitStarted(ctx context.Context, mgr *controller.Manager, ctl *controller.Controller, mgrDone chan error) error {
	for _, w := range []struct {
		ch  <-chan struct{}
		msg string
	}{
		{mgr.Elected(), fmt.Sprintf("caches synced; leading as %s (Lease %s/%s)", mgr.Identity(), nsSource, leaseName)},
		{ctl.Started(), "controller started: its handlers have seen the initial lists; 2 workers"},
	} {
		select {
		case <-w.ch:
			d.p.line("manager", w.msg)
		case err := <-mgrDone:
			mgrDone <- err
			return fmt.Errorf("the manager stopped before the controller started: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("the controller did not start: %w", ctx.Err())
		}
	}
	return nil
}

// preflight refuses to touch a cluster where the demo's names are taken.
func (d *demo) preflight(ctx context.Context) error {
	for _, ns := range demoNamespaces {
		_, err := d.namespaces.Get(ctx, ns, apiclient.GetOptions{})
		if err == nil {
			return fmt.Errorf("namespace %s already exists; the demo only works on what it creates: delete it or use another cluster", ns)
		}
		if !meta.IsNotFound(err) {
			return fmt.Errorf("checking namespace %s: %w", ns, err)
		}
	}
	return nil
}

// cleanup deletes what the demo created.
func (d *demo) cleanup(ctx context.Context, crdCreated bool) error {
	var errs []error
	if err := d.replications.Delete(ctx, replication, apiclient.DeleteOptions{}); err != nil && !meta.IsNotFound(err) && !isNotServed(err) {
		errs = append(errs, err)
	}
	for _, ns := range demoNamespaces {
		if err := d.namespaces.Delete(ctx, ns, apiclient.DeleteOptions{}); err != nil && !meta.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if crdCreated {
		if err := cmr.DeleteCRD(ctx, d.client); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		d.p.say("cleanup: deleted namespaces %s%s", strings.Join(demoNamespaces, ", "), map[bool]string{true: " and the CRD", false: ""}[crdCreated])
	}
	return errors.Join(errs...)
}

func isNotServed(err error) bool {
	st, ok := meta.AsStatus(err)
	return ok && st.Code == http.StatusNotFound
}

func (d *demo) putSource(ctx context.Context, color string) error {
	cm := &cmr.ConfigMap{
		ObjectMeta: meta.ObjectMeta{Namespace: nsSource, Name: sourceName},
		Data:       map[string]string{"color": color, "greeting": "hello from " + nsSource},
	}
	cur, err := d.configMaps.Namespace(nsSource).Get(ctx, sourceName, apiclient.GetOptions{})
	switch {
	case meta.IsNotFound(err):
		_, err = d.configMaps.Namespace(nsSource).Create(ctx, cm, apiclient.CreateOptions{})
	case err == nil:
		cm.ResourceVersion = cur.ResourceVersion
		_, err = d.configMaps.Namespace(nsSource).Update(ctx, cm, apiclient.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s/%s: %w", nsSource, sourceName, err)
	}
	return nil
}

func (d *demo) labelNamespace(ctx context.Context, ns string, on bool) error {
	cur, err := d.namespaces.Get(ctx, ns, apiclient.GetOptions{})
	if err != nil {
		return err
	}
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	if on {
		cur.Labels[cmr.LabelReplicateInto] = "true"
	} else {
		delete(cur.Labels, cmr.LabelReplicateInto)
	}
	_, err = d.namespaces.Update(ctx, cur, apiclient.UpdateOptions{})
	return err
}

// state is what the checks compare: copies (namespace → color) and the status.
type state struct {
	copies map[string]string
	uids   map[string]string
	status *cmr.ReplicationStatus
}

func (s state) String() string {
	var parts []string
	for _, ns := range slices.Sorted(maps.Keys(s.copies)) {
		parts = append(parts, ns+"="+s.copies[ns])
	}
	st := "no ConfigMapReplication"
	if s.status != nil {
		st = fmt.Sprintf("status copies=%d namespaces=%v", s.status.Copies, s.status.Namespaces)
		if s.status.Message != "" {
			st += fmt.Sprintf(" message=%q", s.status.Message)
		}
	}
	return fmt.Sprintf("copies {%s}; %s", strings.Join(parts, " "), st)
}

// observe reads the state from the API server (not from a cache).
func (d *demo) observe(ctx context.Context) (state, error) {
	s := state{copies: map[string]string{}, uids: map[string]string{}}
	for _, ns := range demoNamespaces {
		list, err := d.configMaps.Namespace(ns).List(ctx, apiclient.ListOptions{LabelSelector: cmr.LabelReplication + "=" + replication})
		if err != nil {
			return s, err
		}
		for _, cm := range list.Items {
			s.copies[ns] = cm.Data["color"]
			s.uids[ns] = cm.UID
		}
	}
	r, err := d.replications.Get(ctx, replication, apiclient.GetOptions{})
	if err == nil {
		s.status = &r.Status
	} else if !meta.IsNotFound(err) {
		return s, err
	}
	return s, nil
}

// step is one scripted change and the state it must lead to.
type step struct {
	title string
	do    func(ctx context.Context) error
	want  string
	check func(s state) bool
}

// expect returns a check for exactly these copies (namespace → color) and a matching status.
func expect(copies map[string]string, message string) func(state) bool {
	return func(s state) bool {
		if len(s.copies) != len(copies) {
			return false
		}
		for ns, c := range copies {
			if s.copies[ns] != c {
				return false
			}
		}
		if s.status == nil {
			return false
		}
		nss := slices.Sorted(maps.Keys(copies))
		return s.status.Copies == len(copies) && slices.Equal(s.status.Namespaces, nss) &&
			strings.Contains(s.status.Message, message) && (message != "" || s.status.Message == "")
	}
}

func (d *demo) steps() []step {
	var uidB string
	return []step{{
		title: fmt.Sprintf("create ConfigMapReplication %s: copy %s/%s into namespaces labelled %s=true", replication, nsSource, sourceName, cmr.LabelReplicateInto),
		do: func(ctx context.Context) error {
			r := &cmr.ConfigMapReplication{
				TypeMeta:   cmr.ReplicationKind.TypeMeta(),
				ObjectMeta: meta.ObjectMeta{Name: replication},
				Spec: cmr.ReplicationSpec{
					Source:            cmr.SourceRef{Namespace: nsSource, Name: sourceName},
					NamespaceSelector: meta.LabelSelector{MatchLabels: map[string]string{cmr.LabelReplicateInto: "true"}},
				},
			}
			_, err := d.replications.Create(ctx, r, apiclient.CreateOptions{})
			return err
		},
		want:  "copies in demo-a and demo-b (blue); status copies=2",
		check: expect(map[string]string{nsA: "blue", nsB: "blue"}, ""),
	}, {
		title: "change the source: color=green",
		do:    func(ctx context.Context) error { return d.putSource(ctx, "green") },
		want:  "both copies green",
		check: expect(map[string]string{nsA: "green", nsB: "green"}, ""),
	}, {
		title: "label namespace demo-c",
		do:    func(ctx context.Context) error { return d.labelNamespace(ctx, nsC, true) },
		want:  "a third copy, in demo-c; status copies=3",
		check: expect(map[string]string{nsA: "green", nsB: "green", nsC: "green"}, ""),
	}, {
		title: "remove the label from namespace demo-a",
		do:    func(ctx context.Context) error { return d.labelNamespace(ctx, nsA, false) },
		want:  "the copy in demo-a deleted; status copies=2",
		check: expect(map[string]string{nsB: "green", nsC: "green"}, ""),
	}, {
		title: "someone deletes the copy demo-b/settings",
		do: func(ctx context.Context) error {
			s, err := d.observe(ctx)
			if err != nil {
				return err
			}
			uidB = s.uids[nsB]
			return d.configMaps.Namespace(nsB).Delete(ctx, sourceName, apiclient.DeleteOptions{})
		},
		want: "the copy recreated (a new object); status unchanged",
		check: func(s state) bool {
			return expect(map[string]string{nsB: "green", nsC: "green"}, "")(s) && s.uids[nsB] != "" && s.uids[nsB] != uidB
		},
	}, {
		title: "delete the source ConfigMap",
		do: func(ctx context.Context) error {
			return d.configMaps.Namespace(nsSource).Delete(ctx, sourceName, apiclient.DeleteOptions{})
		},
		want:  "every copy deleted; status copies=0 saying the source is missing",
		check: expect(map[string]string{}, "source ConfigMap demo-src/settings not found"),
	}, {
		title: "create the source again: color=red",
		do:    func(ctx context.Context) error { return d.putSource(ctx, "red") },
		want:  "copies back in demo-b and demo-c (red)",
		check: expect(map[string]string{nsB: "red", nsC: "red"}, ""),
	}, {
		title: "delete the ConfigMapReplication",
		do: func(ctx context.Context) error {
			return d.replications.Delete(ctx, replication, apiclient.DeleteOptions{})
		},
		want:  "no ConfigMapReplication and no copies left",
		check: func(s state) bool { return s.status == nil && len(s.copies) == 0 },
	}}
}

// runStep applies a step and waits for its state, polling the API server every 25 ms.
func (d *demo) runStep(ctx context.Context, n int, s step) error {
	d.p.say("\nstep %d: %s\n  expect: %s", n, s.title, s.want)
	d.p.restart()
	if err := s.do(ctx); err != nil {
		return fmt.Errorf("step %d (%s): %w", n, s.title, err)
	}
	start := time.Now()
	deadline := time.NewTimer(d.stepTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last state
	for {
		st, err := d.observe(ctx)
		if err != nil {
			return fmt.Errorf("step %d: reading the state: %w", n, err)
		}
		last = st
		if s.check(st) {
			d.p.say("  ✓ %s — converged in %v", st, time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("step %d (%s) did not converge within %v:\n  want: %s\n  got:  %s", n, s.title, d.stepTimeout, s.want, last)
		case <-ctx.Done():
			return fmt.Errorf("step %d (%s): %w; last state: %s", n, s.title, ctx.Err(), last)
		}
	}
}

// printMetrics prints the controller's and the queue's main metrics.
func (d *demo) printMetrics(reg *metrics.Registry) {
	var b strings.Builder
	_ = reg.WriteText(&b)
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		l := sc.Text()
		for _, prefix := range []string{"controller_runtime_reconcile_total{", "controller_runtime_reconcile_errors_total{",
			"controller_runtime_reconcile_time_seconds_count{", "workqueue_adds_total{", "leader_election_master_status{",
			"rest_client_requests_total{", "reflector_lists_total{", "informerkit_informer_cached_objects{"} {
			if strings.HasPrefix(l, prefix) {
				d.p.say("  %s", l)
			}
		}
	}
}
