package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/controller/metrics"
	"github.com/informerkit/informerkit/workqueue"
)

// quiet discards logs; tests assert on behaviour, not on log lines.
var quiet = slog.New(slog.DiscardHandler)

// call is one Reconcile call as seen by a recorder.
type call struct {
	req Request
	at  time.Time
}

// recorder is a Reconciler that records its calls and answers with fn.
type recorder struct {
	mu    sync.Mutex
	calls []call
	fn    func(ctx context.Context, req Request, n int) (Result, error) // n: 0-based call count for req
}

func (r *recorder) Reconcile(ctx context.Context, req Request) (Result, error) {
	r.mu.Lock()
	n := 0
	for _, c := range r.calls {
		if c.req == req {
			n++
		}
	}
	r.calls = append(r.calls, call{req: req, at: time.Now()})
	fn := r.fn
	r.mu.Unlock()
	if fn == nil {
		return Result{}, nil
	}
	return fn(ctx, req, n)
}

func (r *recorder) snapshot() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// requests returns a Channel source of Requests and its sender.
func requests() (Source, chan<- GenericEvent[Request]) {
	ch := make(chan GenericEvent[Request], 100)
	h := EventHandlerFuncs[Request]{GenericFunc: func(_ context.Context, e GenericEvent[Request], q Queue) { q.Add(e.Object) }}
	return Channel[Request](ch, h), ch
}

// run starts c and returns a stop function that cancels it and returns Start's error.
func run(t *testing.T, c *Controller) (cancel func(), done <-chan error) {
	t.Helper()
	ctx, cancelFn := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Start(ctx) }()
	return cancelFn, errc
}

func newController(t *testing.T, r Reconciler, opts Options) (*Controller, chan<- GenericEvent[Request]) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	c, err := New("test", r, opts)
	if err != nil {
		t.Fatal(err)
	}
	src, ch := requests()
	if err := c.Watch(src); err != nil {
		t.Fatal(err)
	}
	return c, ch
}

func TestNewValidates(t *testing.T) {
	r := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })
	for _, tc := range []struct {
		name string
		rec  Reconciler
		opts Options
		want string
	}{
		{"", r, Options{}, "needs a name"},
		{"x", nil, Options{}, "needs a Reconciler"},
		{"x", r, Options{MaxConcurrentReconciles: -1}, "is negative"},
	} {
		if _, err := New(tc.name, tc.rec, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): %v, want %q", tc.name, err, tc.want)
		}
	}
	c, _ := New("x", r, Options{Logger: quiet})
	if err := c.Watch(nil); err == nil {
		t.Error("Watch(nil) accepted")
	}
}

func TestErrorsBackOffExponentiallyAndSuccessForgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, _ Request, n int) (Result, error) {
			if n < 4 {
				return Result{}, fmt.Errorf("failure %d", n)
			}
			return Result{}, nil
		}}
		c, ch := newController(t, rec, Options{RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[Request](5*time.Millisecond, time.Second)})
		stop, done := run(t, c)
		req := Request{Namespace: "ns", Name: "a"}
		ch <- GenericEvent[Request]{Object: req}
		time.Sleep(time.Second) // fake time: every retry is due long before
		synctest.Wait()
		calls := rec.snapshot()
		if len(calls) != 5 {
			t.Fatalf("%d reconciles, want 5 (4 errors then success)", len(calls))
		}
		// Backoff 5 ms · 2^n between attempts.
		for i, want := range []time.Duration{5, 10, 20, 40} {
			if got := calls[i+1].at.Sub(calls[i].at); got != want*time.Millisecond {
				t.Errorf("delay before attempt %d = %v, want %v", i+2, got, want*time.Millisecond)
			}
		}
		if n := c.Queue().NumRequeues(req); n != 0 {
			t.Errorf("NumRequeues after success = %d, want 0 (Forget)", n)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestRequeueAfterAndRequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, req Request, n int) (Result, error) {
			switch {
			case req.Name == "after" && n == 0:
				return Result{RequeueAfter: 3 * time.Second}, nil
			case req.Name == "after" && n == 1:
				return Result{RequeueAfter: 3 * time.Second, Requeue: true}, nil // RequeueAfter wins
			case req.Name == "again" && n < 2:
				return Result{Requeue: true}, nil
			}
			return Result{}, nil
		}}
		reg := metrics.NewRegistry()
		c, ch := newController(t, rec, Options{
			RateLimiter:     workqueue.NewItemExponentialFailureRateLimiter[Request](100*time.Millisecond, time.Minute),
			MetricsProvider: NewMetricsProvider(reg),
		})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "after"}}
		ch <- GenericEvent[Request]{Object: Request{Name: "again"}}
		time.Sleep(time.Minute)
		synctest.Wait()
		var after, again []time.Duration
		start := rec.snapshot()[0].at
		for _, c := range rec.snapshot() {
			if c.req.Name == "after" {
				after = append(after, c.at.Sub(start))
			} else {
				again = append(again, c.at.Sub(start))
			}
		}
		if want := []time.Duration{0, 3 * time.Second, 6 * time.Second}; fmt.Sprint(after) != fmt.Sprint(want) {
			t.Errorf("RequeueAfter reconciles at %v, want %v", after, want)
		}
		// Requeue uses the rate limiter: 100 ms, then 200 ms.
		if want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}; fmt.Sprint(again) != fmt.Sprint(want) {
			t.Errorf("Requeue reconciles at %v, want %v", again, want)
		}
		if n := c.Queue().NumRequeues(Request{Name: "after"}); n != 0 {
			t.Errorf("RequeueAfter left NumRequeues = %d, want 0 (Forget)", n)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		text := scrape(t, reg)
		for _, want := range []string{
			`controller_runtime_reconcile_total{controller="test",result="requeue_after"} 2`,
			`controller_runtime_reconcile_total{controller="test",result="requeue"} 2`,
			`controller_runtime_reconcile_total{controller="test",result="success"} 2`,
			`controller_runtime_reconcile_total{controller="test",result="error"} 0`,
			`controller_runtime_reconcile_time_seconds_count{controller="test"} 6`,
			`controller_runtime_max_concurrent_reconciles{controller="test"} 1`,
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("metrics lack %q:\n%s", want, text)
			}
		}
	})
}

func TestPanicIsRecoveredCountedAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		rec := &recorder{fn: func(_ context.Context, _ Request, n int) (Result, error) {
			switch n {
			case 0:
				panic("first attempt explodes")
			case 1:
				panic(boom)
			}
			return Result{}, nil
		}}
		reg := metrics.NewRegistry()
		c, ch := newController(t, rec, Options{
			RateLimiter:     workqueue.NewItemExponentialFailureRateLimiter[Request](time.Millisecond, time.Second),
			MetricsProvider: NewMetricsProvider(reg),
		})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "p"}}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := len(rec.snapshot()); n != 3 {
			t.Fatalf("%d reconciles, want 3 (two panics, then success)", n)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		text := scrape(t, reg)
		for _, want := range []string{
			`controller_runtime_reconcile_panics_total{controller="test"} 2`,
			`controller_runtime_reconcile_errors_total{controller="test"} 2`,
			`controller_runtime_reconcile_total{controller="test",result="error"} 2`,
			`controller_runtime_reconcile_total{controller="test",result="success"} 1`,
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("metrics lack %q:\n%s", want, text)
			}
		}
	})
}

func TestPanicErrorUnwraps(t *testing.T) {
	boom := errors.New("boom")
	pe := &PanicError{Request: Request{Namespace: "ns", Name: "x"}, Value: boom}
	if !errors.Is(pe, boom) || !strings.Contains(pe.Error(), "Reconcile(ns/x) panicked: boom") {
		t.Fatalf("PanicError: %v", pe)
	}
	if (&PanicError{Value: 3}).Unwrap() != nil {
		t.Fatal("non-error panic value unwrapped")
	}
}

func TestTerminalErrorIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(context.Context, Request, int) (Result, error) {
			return Result{}, TerminalError(errors.New("invalid spec"))
		}}
		c, ch := newController(t, rec, Options{})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "t"}}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := len(rec.snapshot()); n != 1 {
			t.Fatalf("%d reconciles of a terminal error, want 1", n)
		}
		stop()
		<-done
	})
	if TerminalError(nil) != nil {
		t.Fatal("TerminalError(nil) != nil")
	}
}

func TestConcurrencyLimitAndOneWorkerPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		running := map[Request]int{}
		maxTotal, total := 0, 0
		release := make(chan struct{})
		rec := &recorder{fn: func(_ context.Context, req Request, _ int) (Result, error) {
			mu.Lock()
			running[req]++
			if running[req] > 1 {
				t.Errorf("%v reconciled by two workers at once", req)
			}
			total++
			maxTotal = max(maxTotal, total)
			mu.Unlock()
			<-release
			mu.Lock()
			running[req]--
			total--
			mu.Unlock()
			return Result{}, nil
		}}
		reg := metrics.NewRegistry()
		c, ch := newController(t, rec, Options{MaxConcurrentReconciles: 3, MetricsProvider: NewMetricsProvider(reg)})
		stop, done := run(t, c)
		for i := range 10 {
			ch <- GenericEvent[Request]{Object: Request{Name: fmt.Sprint(i)}}
		}
		settle() // every goroutine blocked: three reconciles in progress, nothing else
		if n := len(rec.snapshot()); n != 3 {
			t.Fatalf("%d reconciles started with 3 workers, want exactly 3", n)
		}
		if got := reg.NewGauge("controller_runtime_active_workers", "Number of workers currently reconciling, per controller.", "controller").With("test").Value(); got != 3 {
			t.Fatalf("active workers = %v, want 3", got)
		}
		// Re-add a key being reconciled, many times: it must wait, then run once more.
		busy := rec.snapshot()[0].req
		for range 5 {
			ch <- GenericEvent[Request]{Object: busy}
		}
		settle()
		if n := len(rec.snapshot()); n != 3 {
			t.Fatalf("a re-added busy key started a reconcile (%d calls)", n)
		}
		close(release)
		settle()
		var busyCalls int
		for _, c := range rec.snapshot() {
			if c.req == busy {
				busyCalls++
			}
		}
		if n := len(rec.snapshot()); n != 11 || busyCalls != 2 {
			t.Fatalf("%d reconciles, %d of the busy key; want 11 and 2", n, busyCalls)
		}
		if maxTotal != 3 {
			t.Fatalf("at most %d concurrent reconciles, want 3", maxTotal)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestShutdownDrainsInFlightReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var ctxErr error
		rec := &recorder{fn: func(ctx context.Context, req Request, _ int) (Result, error) {
			if req.Name == "slow" {
				<-release
				ctxErr = ctx.Err()
			}
			return Result{}, nil
		}}
		c, ch := newController(t, rec, Options{})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "slow"}}
		ch <- GenericEvent[Request]{Object: Request{Name: "queued"}}
		settle()
		stop()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Start returned (%v) while a reconcile was in flight", err)
		default:
		}
		time.Sleep(10 * time.Second) // well within the drain timeout
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("Start = %v after a clean drain", err)
		}
		if ctxErr != nil {
			t.Fatalf("the in-flight reconcile's context was cancelled during the drain: %v", ctxErr)
		}
		for _, c := range rec.snapshot() {
			if c.req.Name == "queued" {
				t.Fatal("a Request still queued at shutdown was reconciled")
			}
		}
		if !c.Queue().ShuttingDown() {
			t.Fatal("queue not shut down")
		}
	})
}

func TestDrainTimeoutCancelsReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(ctx context.Context, _ Request, _ int) (Result, error) {
			<-ctx.Done()
			return Result{}, ctx.Err()
		}}
		c, ch := newController(t, rec, Options{DrainTimeout: 5 * time.Second})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "stuck"}}
		settle()
		stopAt := time.Now()
		stop()
		err := <-done
		if err == nil || !strings.Contains(err.Error(), "drain timeout 5s") {
			t.Fatalf("Start = %v, want a drain timeout error", err)
		}
		if d := time.Since(stopAt); d != 5*time.Second {
			t.Fatalf("Start returned %v after cancel, want the drain timeout 5s", d)
		}
	})
}

func TestLeadershipLossCancelsReconcilesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cause error
		rec := &recorder{fn: func(ctx context.Context, _ Request, _ int) (Result, error) {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return Result{}, nil
		}}
		c, ch := newController(t, rec, Options{DrainTimeout: time.Hour})
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Start(ctx) }()
		ch <- GenericEvent[Request]{Object: Request{Name: "x"}}
		settle()
		start := time.Now()
		cancel(ErrLeaderElectionLost)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("stopping after leadership loss took %v, want no drain", d)
		}
		if !errors.Is(cause, ErrLeaderElectionLost) {
			t.Fatalf("reconcile context cause = %v, want ErrLeaderElectionLost", cause)
		}
	})
}

func TestReconcileTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var took time.Duration
		rec := &recorder{fn: func(ctx context.Context, req Request, n int) (Result, error) {
			if n > 0 {
				return Result{}, nil
			}
			start := time.Now()
			<-ctx.Done()
			took = time.Since(start)
			return Result{}, ctx.Err()
		}}
		c, ch := newController(t, rec, Options{ReconcileTimeout: 2 * time.Second})
		stop, done := run(t, c)
		ch <- GenericEvent[Request]{Object: Request{Name: "x"}}
		time.Sleep(time.Minute)
		synctest.Wait()
		if took != 2*time.Second {
			t.Fatalf("reconcile context ended after %v, want 2s", took)
		}
		stop()
		<-done
	})
}

func TestStartWaitsForSourcesToSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		c, ch := newController(t, rec, Options{CacheSyncTimeout: 10 * time.Second, Logger: quiet})
		gate := &gatedSource{}
		if err := c.Watch(gate); err != nil {
			t.Fatal(err)
		}
		stop, done := run(t, c)
		defer func() { stop(); <-done }()
		ch <- GenericEvent[Request]{Object: Request{Name: "early"}}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(rec.snapshot()); n != 0 {
			t.Fatalf("%d reconciles before every source synced", n)
		}
		gate.synced.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		if n := len(rec.snapshot()); n != 1 {
			t.Fatalf("%d reconciles after the sources synced, want 1", n)
		}
		select {
		case err := <-done:
			t.Fatalf("Start returned %v", err)
		default:
		}
		c2, _ := newController(t, rec, Options{CacheSyncTimeout: 10 * time.Second, Logger: quiet})
		if err := c2.Watch(&gatedSource{}); err != nil {
			t.Fatal(err)
		}
		err := c2.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), "source 1 (*controller.gatedSource) did not sync within 10s") {
			t.Fatalf("Start with a source that never syncs = %v", err)
		}
		if err := c2.Watch(&gatedSource{}); err == nil {
			t.Fatal("Watch after Start accepted")
		}
		if err := c2.Start(context.Background()); err == nil {
			t.Fatal("second Start accepted")
		}
	})
}

// gatedSource syncs when told to and delivers nothing.
type gatedSource struct{ synced atomic.Bool }

func (g *gatedSource) Run(ctx context.Context, _ Queue) error { <-ctx.Done(); return nil }
func (g *gatedSource) HasSynced() bool                        { return g.synced.Load() }

// failingSource fails at once.
type failingSource struct{}

func (failingSource) Run(context.Context, Queue) error { return errors.New("cannot start") }
func (failingSource) HasSynced() bool                  { return false }

func TestFailingSourceStopsTheController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newController(t, &recorder{}, Options{})
		if err := c.Watch(failingSource{}); err != nil {
			t.Fatal(err)
		}
		err := c.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), "source 1: cannot start") {
			t.Fatalf("Start = %v", err)
		}
	})
}

func TestRequestString(t *testing.T) {
	if s := (Request{Namespace: "ns", Name: "a"}).String(); s != "ns/a" {
		t.Fatal(s)
	}
	if s := (Request{Name: "a"}).String(); s != "a" {
		t.Fatal(s)
	}
	if !(Result{}).IsZero() || (Result{Requeue: true}).IsZero() {
		t.Fatal("Result.IsZero")
	}
}

// settle lets the fake clock run past the controller's sync polling and waits until every
// goroutine of the bubble is blocked.
func settle() {
	time.Sleep(time.Second)
	synctest.Wait()
}

func scrape(t *testing.T, reg *metrics.Registry) string {
	t.Helper()
	var b strings.Builder
	if err := reg.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
