package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// env is one apitest server, an apiclient.Resource for its configmaps, and a log recorder.
// Every reflector test talks to the server through apiclient; nothing about the API is faked.
type env struct {
	t      *testing.T
	srv    *apitest.Server
	res    *apiclient.Resource[*testobj.ConfigMap]
	log    *logRecorder
	errsMu sync.Mutex
	errs   []error // what WatchErrorHandler received
	errsCh chan struct{}
}

const cms = "configmaps"

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWithOptions(t, apitest.Options{})
}

func newEnvWithOptions(t *testing.T, opts apitest.Options) *env {
	t.Helper()
	// Chunked watches keep the request log simple (one GET per watch).
	return newEnvProto(t, apiclient.WatchChunked, opts)
}

// newEnvProto is newEnvWithOptions with watches over proto.
func newEnvProto(t *testing.T, proto apiclient.WatchProtocol, opts apitest.Options) *env {
	t.Helper()
	srv := apitest.NewServerWithOptions(opts)
	t.Cleanup(srv.Close)
	cfg := srv.Config()
	// The client keeps its default retries: the reflector turns them off for its own
	// requests (apiclient.ListOptions.DisableRetries), so that it sees 429, 5xx and 410 itself.
	cfg.WatchProtocol = proto
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	res := apiclient.NewResource[*testobj.ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: cms})
	return &env{t: t, srv: srv, res: res, log: &logRecorder{}, errsCh: make(chan struct{})}
}

// testOptions are New's arguments: the ListerWatcher, the store and the options.
type testOptions struct {
	lw    apiclient.ListerWatcher[*testobj.ConfigMap]
	store Store[*testobj.ConfigMap]
	Options[*testobj.ConfigMap]
}

// new calls New with o's arguments.
func (o testOptions) new() *Reflector[*testobj.ConfigMap] { return New(o.lw, o.store, o.Options) }

// options returns the options most tests start from: LIST+WATCH (tests of WatchList set
// WatchList), fast backoff, the recorded logger and error handler.
func (e *env) options(store Store[*testobj.ConfigMap]) testOptions {
	return testOptions{lw: e.res, store: store, Options: Options[*testobj.ConfigMap]{
		WatchList:         WatchListOff,
		Backoff:           Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond},
		Logger:            slog.New(e.log.handler()),
		WatchErrorHandler: e.handleError,
	}}
}

func (e *env) handleError(_ context.Context, err error) {
	e.errsMu.Lock()
	e.errs = append(e.errs, err)
	close(e.errsCh)
	e.errsCh = make(chan struct{})
	e.errsMu.Unlock()
}

// waitError waits until the handler has received an error matching match and returns it.
func (e *env) waitError(what string, match func(error) bool) error {
	e.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		e.errsMu.Lock()
		ch := e.errsCh
		errs := append([]error(nil), e.errs...)
		e.errsMu.Unlock()
		for _, err := range errs {
			if match(err) {
				return err
			}
		}
		select {
		case <-ch:
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for error %s; got %v", what, errs)
		}
	}
}

// run starts r.Run in a goroutine; the test's cleanup stops it and waits for it.
func (e *env) run(opts testOptions) *Reflector[*testobj.ConfigMap] {
	r := opts.new()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

func (e *env) create(name string) string {
	e.t.Helper()
	o, err := e.srv.Create(cms, map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"v": "0"},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return o.ResourceVersion()
}

func (e *env) update(name, value string) string {
	e.t.Helper()
	o, err := e.srv.Mutate(cms, "default", name, func(o apitest.Object) { o["data"] = map[string]any{"v": value} })
	if err != nil {
		e.t.Fatal(err)
	}
	return o.ResourceVersion()
}

func (e *env) remove(name string) string {
	e.t.Helper()
	if err := e.srv.Delete(cms, "default", name); err != nil {
		e.t.Fatal(err)
	}
	return e.srv.ResourceVersion()
}

// serverContent returns key → resourceVersion of the server's configmaps.
func (e *env) serverContent() map[string]string {
	e.t.Helper()
	objs, _, err := e.srv.List(cms, "")
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range objs {
		out[o.Namespace()+"/"+o.Name()] = o.ResourceVersion()
	}
	return out
}

// requests returns the logged requests of verb on configmaps after seq.
func (e *env) requests(verb apitest.Verb, after int64) []apitest.Request {
	return e.srv.RequestsMatching(apitest.RequestFilter{Verb: verb, Resource: cms, After: after})
}

// waitRequests waits until n requests of verb on configmaps after seq have been answered
// (for a watch: its stream started or it was refused), and returns them.
func (e *env) waitRequests(verb apitest.Verb, after int64, n int) []apitest.Request {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var got []apitest.Request
	err := e.srv.WaitFor(ctx, func() bool {
		got = got[:0]
		for _, r := range e.requests(verb, after) {
			if r.Code != 0 {
				got = append(got, r)
			}
		}
		return len(got) >= n
	})
	if err != nil {
		e.t.Fatalf("timed out waiting for %d answered %s requests\n%s", n, verb, e.describeRequests())
	}
	return got
}

// waitWatch waits until a watch of configmaps with an ID above afterID is open on the server
// (registered for events and faults, not just answered) and returns it.
func (e *env) waitWatch(afterID int64) apitest.WatchInfo {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var got apitest.WatchInfo
	err := e.srv.WaitFor(ctx, func() bool {
		for _, w := range e.srv.Watches(cms) {
			if w.ID > afterID {
				got = w
				return true
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("timed out waiting for a watch after #%d\n%s", afterID, e.describeRequests())
	}
	return got
}

// waitOnlyWatch waits until the one open watch of configmaps is one with an ID above afterID
// (the watches it replaced are gone from the server, so faults hit only it) and returns it.
func (e *env) waitOnlyWatch(afterID int64) apitest.WatchInfo {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var got apitest.WatchInfo
	err := e.srv.WaitFor(ctx, func() bool {
		ws := e.srv.Watches(cms)
		if len(ws) != 1 || ws[0].ID <= afterID {
			return false
		}
		got = ws[0]
		return true
	})
	if err != nil {
		e.t.Fatalf("timed out waiting for a single watch after #%d: %v\n%s", afterID, e.srv.Watches(cms), e.describeRequests())
	}
	return got
}

// must fails the test if a fault hit no watch or failed.
func (e *env) must(n int, err error) {
	e.t.Helper()
	if err != nil || n != 1 {
		e.t.Fatalf("fault hit %d watches (want 1): %v", n, err)
	}
}

// describeRequests formats the request log of configmaps for failure messages.
func (e *env) describeRequests() string {
	var b strings.Builder
	for _, r := range e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms}) {
		fmt.Fprintf(&b, "  #%d %s %d %s\n", r.Seq, r.Verb, r.Code, r.Query.Encode())
	}
	return b.String()
}

// watchTimeoutOK reports whether a request's timeoutSeconds is in [300, 600].
func watchTimeoutOK(r apitest.Request) bool {
	n, err := strconv.Atoi(r.Param("timeoutSeconds"))
	return err == nil && n >= 300 && n <= 600
}

// logRecorder keeps every log line of the reflector (debug included).
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) handler() slog.Handler {
	return slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	return len(p), nil
}

func (l *logRecorder) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *logRecorder) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "")
}

// isErr returns a matcher for errors.Is(err, target).
func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// synced waits until the store has completed n syncs (replace or finish) and the reflector
// has recorded the n-th (it tells the store its resourceVersion last), and returns the
// resourceVersion of the n-th sync.
func synced(t *testing.T, s *recStore, n int) string {
	t.Helper()
	var rv string
	s.waitFor(t, fmt.Sprintf("%d syncs", n), func(s *recStore) bool {
		seen := 0
		for i, o := range s.ops {
			if o.Kind != "replace" && o.Kind != "finish" {
				continue
			}
			if seen++; seen < n {
				continue
			}
			for _, next := range s.ops[i+1:] {
				if next.Kind == "rv" && next.RV == o.RV {
					rv = o.RV
					return true
				}
			}
			return false
		}
		return false
	})
	return rv
}

// storeContent returns key → resourceVersion of the store.
func storeContent(s *recStore) map[string]string {
	_, c := s.snapshot()
	return c
}

func sameContent(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// waitContent waits until the store holds exactly the server's configmaps.
func (e *env) waitContent(s *recStore) {
	e.t.Helper()
	want := e.serverContent()
	s.waitFor(e.t, fmt.Sprintf("store content %v", want), func(s *recStore) bool {
		got := make(map[string]string, len(s.objs))
		for k, o := range s.objs {
			got[k] = o.ResourceVersion
		}
		return sameContent(got, want)
	})
}

// storeKinds runs f for a plain Store (Replace) and an IncrementalReplacer.
func storeKinds(t *testing.T, f func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap])) {
	t.Run("store=replace", func(t *testing.T) {
		rec := newRecStore()
		f(t, rec, rec)
	})
	t.Run("store=incremental", func(t *testing.T) {
		rec := newRecStore()
		f(t, rec, incrStore{rec})
	})
}
