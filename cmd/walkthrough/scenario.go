package walkthrough

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap declares the fields of a ConfigMap the walkthrough reads: metadata and data.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var configMapKind = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

// The scenario's namespaces: the informer watches ConfigMaps in nsWatched; the reconciler
// copies each of them into nsCopies, which nothing watches (so its writes cause no event).
const (
	nsWatched = "walk"
	nsCopies  = "walk-copies"
)

// quiet discards the stages' logs: the reports say what they do.
var quiet = slog.New(slog.DiscardHandler)

// The scenario's settings.
const (
	// slowResync is the slow handler's resync period.
	slowResync = time.Minute
	// settleLimit bounds the fake time any action may take to settle.
	settleLimit = 5 * time.Minute
)

// Result is what a run produced: each step's reports in canonical order, and the figures.
type Result struct {
	Steps   []Step
	Figures []Figure
	// Runs is the number of MODIFIED events the figures are the medians of.
	Runs int
}

// Step is one step of the scenario as it ran.
type Step struct {
	Title   string
	Reports []*report
}

// scenario holds a run.
type scenario struct {
	rc  *recorder
	srv *apitest.Server

	inf     *informer.Informer[*ConfigMap]
	slowReg *informer.Registration[*ConfigMap]
	copies  *apiclient.Resource[*ConfigMap]

	mu         sync.Mutex
	slowGate   *gate
	reconGate  *gate
	ctl        *controller.Controller
	reconciled map[string]int // reconciles per Request
	inflight   int            // reconciles running
	held       int            // of which the scenario holds
	resyncs    int            // resync notifications the slow handler got
	reconErr   error
	showLogs   atomic.Bool
}

// gate holds a handler or a reconcile until the scenario opens it.
type gate struct {
	key     string // the Request or object key it holds ("" for any)
	ch      chan struct{}
	opened  *report // the scenario's action that opened it
	blocked bool
}

// Run runs the scenario once and, when runs > 0, the MODIFIED event of step 2 runs more
// times with the clock and the heap counters read at every report, for the figures. It
// must be called inside a testing/synctest bubble: fake time is what makes the run the
// same on every machine (the resync period passes at once, and synctest.Wait tells when
// every stage has done all it can).
func Run(ctx context.Context, runs int) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &scenario{rc: newRecorder(), reconciled: map[string]int{}}
	s.srv = apitest.NewServerWithOptions(apitest.Options{InMemory: true, BookmarkInterval: time.Hour})
	defer s.srv.Close()

	for _, ns := range []string{nsWatched, nsCopies} {
		if _, err := s.srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.srv.Create("configmaps", newConfigMap(name, "red")); err != nil {
			return nil, err
		}
	}

	icli, err := apiclient.New(s.wireConfig())
	if err != nil {
		return nil, err
	}
	defer icli.Close()
	// The reconciler's client is traced: its requests are children of the reconcile.
	tr := tracer{rc: s.rc}
	rcfg := s.srv.Config()
	rcfg.Tracer = tr
	rcli, err := apiclient.New(rcfg)
	if err != nil {
		return nil, err
	}
	defer rcli.Close()
	s.copies = apiclient.NewResource[*ConfigMap](rcli, configMapKind.GroupVersionResource()).Namespace(nsCopies)

	s.inf = informer.New(apiclient.NewResource[*ConfigMap](icli, configMapKind.GroupVersionResource()).Namespace(nsWatched),
		informer.Options[*ConfigMap]{Observe: s.rc.observeInformer, Logger: quiet})
	if err := s.inf.SetWatchErrorHandler(s.watchError); err != nil {
		return nil, err
	}
	s.ctl, err = controller.New("copier", controller.ReconcilerFunc(s.reconcile), controller.Options{
		Tracer: tr, QueueObserve: s.rc.observeQueue, Logger: quiet})
	if err != nil {
		return nil, err
	}
	if err := s.ctl.Watch(controller.FromInformer[*ConfigMap](s.inf, controller.EnqueueRequestForObject[*ConfigMap]())); err != nil {
		return nil, err
	}
	if s.slowReg, err = s.inf.AddEventHandlerWithOptions(slow{s}, informer.HandlerOptions{
		Name: slowHandler, BufferSize: 1, ResyncPeriod: slowResync}); err != nil {
		return nil, err
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	ctlErr := make(chan error, 1)
	wg.Go(func() { ctlErr <- s.ctl.Start(ctx) })
	synctest.Wait() // the controller's handler is registered, its workers wait for the sync

	res := &Result{Runs: runs}
	for i, st := range steps {
		s.rc.beginStep(i)
		if err := st.run(s, ctx); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, st.title, err)
		}
		if err := s.reconcileError(); err != nil {
			return nil, fmt.Errorf("step %d (%s): reconcile: %w", i+1, st.title, err)
		}
	}
	ordered, err := s.rc.steps()
	if err != nil {
		return nil, err
	}
	for i, st := range steps {
		if err := st.check(ordered[i]); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, st.title, err)
		}
		res.Steps = append(res.Steps, Step{Title: st.title, Reports: ordered[i]})
	}
	if runs > 0 {
		if res.Figures, err = s.figures(runs); err != nil {
			return nil, err
		}
	}
	cancel()
	if err := <-ctlErr; err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if s.inf.HasStarted() {
		<-s.inf.Done()
	}
	return res, nil
}

// wireConfig is the informer's client's configuration: it shows the wire, so JSON
// (protobuf is the default for built-in kinds) over chunked HTTP/2 (WebSocket is the
// default), read through the tee; and no gzip, since the tee sits below the client's
// decompression and a 1.37 server gzips a streaming list whenever it is asked to.
func (s *scenario) wireConfig() *apiclient.Config {
	cfg := s.srv.Config()
	cfg.DisableProtobuf = true
	cfg.Compression = apiclient.CompressionNone
	cfg.WatchProtocol = apiclient.WatchChunked
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &wire{base: rt, rc: s.rc} }
	return cfg
}

func newConfigMap(name, color string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "namespace": nsWatched}, "data": map[string]any{"color": color}}
}

// idle reports whether no Request waits and no reconcile runs but one the scenario holds.
func (s *scenario) idle() bool {
	if q := s.ctl.Queue(); q != nil && q.Len() > 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight == s.held
}

func (s *scenario) reconcileError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reconErr
}

// action records a scenario action (before it is made, so that what it causes follows it).
func (s *scenario) action(format string, args ...any) *report {
	in := s.rc.begin()
	return s.rc.add(in, &report{lane: laneScenario, from: actorServer, to: actorServer, text: fmt.Sprintf(format, args...)})
}

// settle waits until every stage has done all it can, the controller is idle (but for a
// reconcile the scenario holds) and done holds, letting fake time pass (in steps of a
// second) while they do not: a client's rate limiter, the reflector's backoff and the
// resync period wait on timers.
func (s *scenario) settle(done func() bool) error {
	deadline := time.Now().Add(settleLimit)
	for {
		synctest.Wait()
		if s.idle() && (done == nil || done()) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the stages did not settle")
		}
		time.Sleep(time.Second)
	}
}

// update changes the data of walk/name on the server, as a client's PUT would.
func (s *scenario) update(name string, data map[string]string) error {
	obj, err := s.srv.Get("configmaps", nsWatched, name)
	if err != nil {
		return err
	}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	obj["data"] = d
	_, err = s.srv.Update("configmaps", obj)
	return err
}

// watchError reports the error that ended a list or a watch.
func (s *scenario) watchError(_ context.Context, err error) {
	in := s.rc.begin()
	s.rc.add(in, &report{lane: laneReflector, from: actorReflector, to: actorReflector, text: "watch ended: " + describeError(err)},
		s.rc.find("wire|error"))
}

func describeError(err error) string {
	if meta.IsResourceExpired(err) {
		return "410 Expired: the resourceVersion it watches from is no longer in the server's history, so it relists"
	}
	return err.Error()
}

// reconcile is the controller's Reconciler: it keeps a copy of walk/x in walk-copies/x.
func (s *scenario) reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	s.mu.Lock()
	g := s.reconGate
	s.inflight++
	s.mu.Unlock()
	if g != nil && g.key == req.String() {
		in := s.rc.begin()
		s.rc.add(in, &report{lane: laneWorker, from: actorWorker, to: actorWorker, text: "Reconcile(" + req.String() + ") is still running (the scenario holds it)"})
		s.mu.Lock()
		g.blocked = true
		s.held++
		s.mu.Unlock()
		<-g.ch
		s.mu.Lock()
		s.held--
		s.mu.Unlock()
		in = s.rc.begin()
		s.rc.add(in, &report{lane: laneWorker, from: actorWorker, to: actorWorker, text: "Reconcile(" + req.String() + ") goes on"}, g.opened)
	}
	err := s.sync(ctx, req)
	s.mu.Lock()
	s.inflight--
	s.reconciled[req.String()]++
	if err != nil && s.reconErr == nil {
		s.reconErr = err
	}
	s.mu.Unlock()
	return controller.Result{}, err
}

func (s *scenario) sync(ctx context.Context, req controller.Request) error {
	src, exists, err := s.inf.GetIndexer().GetByKey(req.String())
	if err != nil {
		return err
	}
	if !exists {
		err := s.copies.Delete(ctx, req.Name, apiclient.DeleteOptions{})
		if meta.IsNotFound(err) {
			return nil
		}
		return err
	}
	cur, err := s.copies.Get(ctx, req.Name, apiclient.GetOptions{})
	if meta.IsNotFound(err) {
		_, err = s.copies.Create(ctx, &ConfigMap{ObjectMeta: meta.ObjectMeta{Name: req.Name}, Data: maps.Clone(src.Data)}, apiclient.CreateOptions{})
		return err
	}
	if err != nil || maps.Equal(cur.Data, src.Data) {
		return err
	}
	cur.Data = maps.Clone(src.Data)
	_, err = s.copies.Update(ctx, cur, apiclient.UpdateOptions{})
	return err
}

// slow is the second handler: it does nothing, slowly when the scenario holds it.
type slow struct{ s *scenario }

func (h slow) OnAdd(obj *ConfigMap, _ bool)    { h.hold() }
func (h slow) OnUpdate(old, obj *ConfigMap)    { h.resynced(old, obj); h.hold() }
func (h slow) OnDelete(obj *ConfigMap, _ bool) { h.hold() }
func (h slow) resynced(old, obj *ConfigMap) {
	if old == obj {
		h.s.mu.Lock()
		h.s.resyncs++
		h.s.mu.Unlock()
	}
}

func (h slow) hold() {
	h.s.mu.Lock()
	g := h.s.slowGate
	if g != nil {
		g.blocked = true
	}
	h.s.mu.Unlock()
	if g == nil {
		return
	}
	<-g.ch
	in := h.s.rc.begin()
	h.s.rc.add(in, &report{lane: laneSlow, from: actorSlow, to: actorSlow, text: "the slow handler returns"}, g.opened)
}
