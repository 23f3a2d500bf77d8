package workqueue

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// recorder is a MetricsProvider (and MetricsDeleter) that records every metric it hands out.
type recorder struct {
	mu      sync.Mutex
	created []string // "kind:name"
	deleted []string
	metrics map[string]*recorded
}

type recorded struct {
	mu    *sync.Mutex
	value float64
	obs   []float64
	sets  int
}

func (m *recorded) Inc() { m.mu.Lock(); m.value++; m.mu.Unlock() }
func (m *recorded) Dec() { m.mu.Lock(); m.value--; m.mu.Unlock() }
func (m *recorded) Set(v float64) {
	m.mu.Lock()
	m.value = v
	m.sets++
	m.mu.Unlock()
}
func (m *recorded) Observe(v float64) { m.mu.Lock(); m.obs = append(m.obs, v); m.mu.Unlock() }

func newRecorder() *recorder { return &recorder{metrics: map[string]*recorded{}} }

func (r *recorder) new(kind, name string) *recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created = append(r.created, kind+":"+name)
	m := &recorded{mu: &r.mu}
	r.metrics[kind+":"+name] = m
	return m
}

func (r *recorder) get(kind, name string) recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.metrics[kind+":"+name]
	if m == nil {
		return recorded{}
	}
	return recorded{value: m.value, obs: slices.Clone(m.obs), sets: m.sets}
}

func (r *recorder) NewDepthMetric(name string) GaugeMetric    { return r.new("depth", name) }
func (r *recorder) NewAddsMetric(name string) CounterMetric   { return r.new("adds", name) }
func (r *recorder) NewLatencyMetric(n string) HistogramMetric { return r.new("latency", n) }
func (r *recorder) NewRetriesMetric(n string) CounterMetric   { return r.new("retries", n) }
func (r *recorder) NewWorkDurationMetric(n string) HistogramMetric {
	return r.new("work", n)
}
func (r *recorder) NewUnfinishedWorkSecondsMetric(n string) SettableGaugeMetric {
	return r.new("unfinished", n)
}
func (r *recorder) NewLongestRunningProcessorSecondsMetric(n string) SettableGaugeMetric {
	return r.new("longest", n)
}
func (r *recorder) DeleteMetrics(name string) {
	r.mu.Lock()
	r.deleted = append(r.deleted, name)
	r.mu.Unlock()
}

// plainProvider hides DeleteMetrics.
type plainProvider struct{ MetricsProvider }

func TestMetricsOnlyForNamedQueuesWithProvider(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	r := newRecorder()
	unnamed := New[string](Config{MetricsProvider: r}).(*queue[string])
	unnamed.Add("a")
	unnamed.AddWithPriority("b", 1)
	noProvider := NewDelaying[string](Config{Name: "q"}).(*queue[string])
	noProvider.Add("a")
	if len(r.created) != 0 || unnamed.metrics != nil || noProvider.metrics != nil {
		t.Fatalf("metrics created for an unnamed queue or without provider: %v", r.created)
	}
	if unnamed.timer != nil || noProvider.timer != nil {
		t.Fatal("timer started without metrics or delays")
	}
	unnamed.ShutDown()
	noProvider.ShutDown()
	if len(r.deleted) != 0 {
		t.Fatalf("DeleteMetrics called for queues without metrics: %v", r.deleted)
	}
}

func TestMetricsCountAddsDepthLatencyAndWorkDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		q := New[string](Config{Name: "q", MetricsProvider: r})
		defer q.ShutDown()
		q.Add("a")
		q.Add("a") // duplicate: not an add
		q.Add("b")
		if got := r.get("adds", "q").value; got != 2 {
			t.Fatalf("adds = %v, want 2", got)
		}
		if got := r.get("depth", "q").value; got != 2 {
			t.Fatalf("depth = %v, want 2", got)
		}
		time.Sleep(3 * time.Second)
		a := getNow(t, q)
		if got := r.get("depth", "q").value; got != 1 {
			t.Fatalf("depth after Get = %v, want 1", got)
		}
		q.Add(a) // re-added while processing: counts as an add and as depth (client-go)
		if got := r.get("depth", "q").value; got != 2 {
			t.Fatalf("depth after re-add while processing = %v, want 2", got)
		}
		time.Sleep(2 * time.Second)
		q.Done(a)
		if got := r.get("latency", "q").obs; !slices.Equal(got, []float64{3}) {
			t.Fatalf("latency = %v, want [3]", got)
		}
		if got := r.get("work", "q").obs; !slices.Equal(got, []float64{2}) {
			t.Fatalf("work duration = %v, want [2]", got)
		}
		b := getNow(t, q)
		again := getNow(t, q)
		q.Done(b)
		q.Done(again)
		if got := r.get("latency", "q").obs; !slices.Equal(got, []float64{3, 5, 2}) {
			t.Fatalf("latency = %v, want [3 5 2]", got)
		}
		if got := r.get("depth", "q").value; got != 0 {
			t.Fatalf("depth = %v, want 0", got)
		}
	})
}

func TestMetricsCountRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		q := NewRateLimiting(DefaultItemBasedRateLimiter[string](), Config{Name: "q", MetricsProvider: r})
		q.AddAfter("a", time.Second)
		q.AddAfter("b", 0)
		q.AddRateLimited("c")
		if got := r.get("retries", "q").value; got != 3 {
			t.Fatalf("retries = %v, want 3", got)
		}
		q.ShutDown()
		q.AddAfter("d", time.Second)
		if got := r.get("retries", "q").value; got != 3 {
			t.Fatalf("retries after ShutDown = %v, want 3", got)
		}
	})
}

func TestMetricsUnfinishedWorkUpdatedPeriodically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		q := New[string](Config{Name: "q", MetricsProvider: r})
		q.Add("a")
		q.Add("b")
		getNow(t, q)
		time.Sleep(time.Second)
		getNow(t, q)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		// At 3 s: a has run 3 s, b 2 s (the last refresh was at exactly 3 s).
		if got := r.get("unfinished", "q").value; got != 5 {
			t.Fatalf("unfinished work seconds = %v, want 5", got)
		}
		if got := r.get("longest", "q").value; got != 3 {
			t.Fatalf("longest running processor seconds = %v, want 3", got)
		}
		sets := r.get("unfinished", "q").sets
		if sets != 6 {
			t.Fatalf("%d refreshes in 3 s, want 6 (every 500 ms)", sets)
		}
		q.Done("a")
		q.Done("b")
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if got := r.get("unfinished", "q").value; got != 0 {
			t.Fatalf("unfinished work seconds with nothing in flight = %v", got)
		}
		q.ShutDown()
		time.Sleep(time.Hour)
		if got := r.get("unfinished", "q").sets; got != 7 {
			t.Fatalf("refreshes = %d, want 7: the timer must stop at ShutDown", got)
		}
	})
}

func TestShutDownDeletesMetricsOnce(t *testing.T) {
	r := newRecorder()
	q := New[string](Config{Name: "q", MetricsProvider: r})
	q.ShutDownWithDrain()
	q.ShutDown()
	if !slices.Equal(r.deleted, []string{"q"}) {
		t.Fatalf("DeleteMetrics calls = %v, want [q]", r.deleted)
	}
	// A provider that cannot delete is fine too.
	p := New[string](Config{Name: "p", MetricsProvider: plainProvider{newRecorder()}})
	p.ShutDown()
}

func TestMetricsTimerIsNotAGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		q := New[string](Config{Name: "q", MetricsProvider: newRecorder()})
		defer q.ShutDown()
		synctest.Wait()
		if err := goleak.Find(before); err != nil {
			t.Fatalf("metrics started a goroutine: %v", err)
		}
	})
}

// notifyingGauge reports its first Set on a channel.
type notifyingGauge struct {
	once sync.Once
	set  chan struct{}
}

func (g *notifyingGauge) Set(float64) { g.once.Do(func() { close(g.set) }) }

// firstRefresh is a recorder whose unfinished-work gauge reports the first refresh.
type firstRefresh struct {
	*recorder
	gauge *notifyingGauge
}

func (f firstRefresh) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric { return f.gauge }

// A named queue that nothing touches until its metrics timer first fires: the timer's callback
// must see the timer the constructor stored (issue 11: the constructor stored it after arming the
// timer and without the queue's lock, a data race that -race reports here).
func TestMetricsTimerFiresOnAnUntouchedQueueWithoutARace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := firstRefresh{recorder: newRecorder(), gauge: &notifyingGauge{set: make(chan struct{})}}
		q := New[string](Config{Name: "q", MetricsProvider: p})
		<-p.gauge.set // the first refresh, 500 ms after New; nothing synchronised with it before
		q.ShutDown()
	})
}
