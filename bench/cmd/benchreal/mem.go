package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// Peak memory: the heap in use (live and not yet collected objects, what a heap limit or
// the OOM killer sees grow) sampled every few milliseconds while a phase runs, and the
// process's resident set high-water mark (VmHWM) from the kernel.

// heapSampler records the largest heap in use while it runs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap starts sampling every 5 ms (runtime/metrics reads without stopping the world).
func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.peak.Store(heapInUse())
	go func() {
		defer close(h.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: heapMetric}}
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
		}
	}()
	return h
}

// end stops the sampler and returns the peak (the current heap included).
func (h *heapSampler) end() uint64 {
	close(h.stop)
	<-h.done
	return max(h.peak.Load(), heapInUse())
}

// procStatus returns a field of /proc/self/status in bytes (VmHWM, VmRSS), 0 if unknown.
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), ":"); ok && name == field {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// relister forces a relist the same way in both implementations: the watch it wraps gets an
// ERROR event with a 410 Expired Status, which makes a reflector list again (with WatchList,
// a new watch with sendInitialEvents). It reports the end of that relist's initial events.
type relister struct {
	mu      sync.Mutex
	inject  func() // ends the current watch with the 410, nil while none is open
	armed   atomic.Bool
	relists chan struct{} // the initial-events-end bookmark of a watch opened after inject
}

func newRelister() *relister { return &relister{relists: make(chan struct{}, 1)} }

// force ends the current watch with a 410 and returns once the relist has delivered its
// initial events (or ctx is done).
func (r *relister) force(ctx context.Context) bool {
	r.mu.Lock()
	inject := r.inject
	r.mu.Unlock()
	if inject == nil {
		return false
	}
	r.armed.Store(true)
	inject()
	select {
	case <-r.relists:
		return true
	case <-ctx.Done():
		return false
	}
}

// initialEventsEnded is called for each bookmark of a watch with its annotations.
func (r *relister) initialEventsEnded(annotations map[string]string) {
	if annotations[apiclient.InitialEventsEndAnnotation] == "true" && r.armed.CompareAndSwap(true, false) {
		select {
		case r.relists <- struct{}{}:
		default:
		}
	}
}

var expired = &meta.Status{Status: "Failure", Code: 410, Reason: meta.StatusReasonExpired, Message: "benchreal: forced relist"}

// relistLW is informerkit's collection with the relister's watch (and the decoding options
// and item-by-item lists passed through).
type relistLW[T meta.Object] struct {
	res *apiclient.Resource[T]
	r   *relister
}

func (l relistLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	return l.res.List(ctx, opts)
}

func (l relistLW[T]) ListEach(ctx context.Context, opts apiclient.ListOptions, fn func(T) error) (meta.ListMeta, error) {
	return l.res.ListEach(ctx, opts, fn)
}

func (l relistLW[T]) WithDecodeOptions(o apiclient.DecodeOptions) apiclient.ListerWatcher[T] {
	return relistLW[T]{l.res.WithDecodeOptions(o).(*apiclient.Resource[T]), l.r}
}

func (l relistLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	inner, err := l.res.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := &injectWatcher[T]{inner: inner, ch: make(chan apiclient.Event[T]), kill: make(chan struct{}),
		stopped: make(chan struct{}), done: make(chan struct{})}
	l.r.mu.Lock()
	l.r.inject = sync.OnceFunc(func() { close(w.kill) })
	l.r.mu.Unlock()
	go w.run(l.r)
	return w, nil
}

// injectWatcher forwards a watch's events until its kill channel closes, then sends the 410.
type injectWatcher[T meta.Object] struct {
	inner   apiclient.Watcher[T]
	ch      chan apiclient.Event[T]
	kill    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	once    sync.Once
}

func (w *injectWatcher[T]) ResultChan() <-chan apiclient.Event[T] { return w.ch }

func (w *injectWatcher[T]) Stop() {
	w.once.Do(func() { close(w.stopped); w.inner.Stop() })
	<-w.done
}

func (w *injectWatcher[T]) run(r *relister) {
	defer close(w.done)
	defer close(w.ch)
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			if ev.Type == apiclient.Bookmark {
				r.initialEventsEnded(ev.Object.GetAnnotations())
			}
			select {
			case w.ch <- ev:
			case <-w.kill:
				w.expire()
				return
			case <-w.stopped:
				return
			}
		case <-w.kill:
			w.expire()
			return
		case <-w.stopped:
			return
		}
	}
}

func (w *injectWatcher[T]) expire() {
	select {
	case w.ch <- apiclient.Event[T]{Type: apiclient.Error, Err: expired}:
	case <-w.stopped:
	}
	w.inner.Stop()
}

// clientGoWatch wraps one of client-go's watches the same way.
type clientGoWatch struct {
	inner   watch.Interface
	ch      chan watch.Event
	kill    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newClientGoWatch(inner watch.Interface, r *relister) watch.Interface {
	w := &clientGoWatch{inner: inner, ch: make(chan watch.Event), kill: make(chan struct{}),
		stopped: make(chan struct{}), done: make(chan struct{})}
	r.mu.Lock()
	r.inject = sync.OnceFunc(func() { close(w.kill) })
	r.mu.Unlock()
	go func() {
		defer close(w.done)
		defer close(w.ch)
		in := inner.ResultChan()
		for {
			select {
			case ev, ok := <-in:
				if !ok {
					return
				}
				if ev.Type == watch.Bookmark {
					if m, ok := ev.Object.(metav1.Object); ok {
						r.initialEventsEnded(m.GetAnnotations())
					}
				}
				select {
				case w.ch <- ev:
				case <-w.kill:
					w.expire()
					return
				case <-w.stopped:
					return
				}
			case <-w.kill:
				w.expire()
				return
			case <-w.stopped:
				return
			}
		}
	}()
	return w
}

func (w *clientGoWatch) expire() {
	st := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "benchreal: forced relist"}
	select {
	case w.ch <- watch.Event{Type: watch.Error, Object: st}:
	case <-w.stopped:
	}
	w.inner.Stop()
}

func (w *clientGoWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *clientGoWatch) Stop() {
	w.once.Do(func() { close(w.stopped); w.inner.Stop() })
	<-w.done
}

// measureRelist forces a relist and records its peak heap, time and CPU; cached says the
// cache holds the whole collection again.
func measureRelist(ctx context.Context, res *childResult, rl *relister, cached func() bool) error {
	heap := sampleHeap()
	cpu0, t0 := cpuTime(), time.Now()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if !rl.force(rctx) {
		return errors.New("the forced relist did not end")
	}
	for !cached() {
		if rctx.Err() != nil {
			return errors.New("the cache is not whole after the relist")
		}
		time.Sleep(time.Millisecond)
	}
	res.RelistSeconds, res.RelistCPUSeconds = time.Since(t0).Seconds(), (cpuTime() - cpu0).Seconds()
	res.PeakHeapRelist = float64(heap.end())
	return nil
}

// relistObject is client-go's object of a kind.
func relistObject(kind string) k8sruntime.Object {
	if kind == "configmaps" {
		return &corev1.ConfigMap{}
	}
	return &corev1.Pod{}
}

// clientGoLW is the ListWatch client-go's typed informers build, with the relister's watch.
func clientGoLW(cs kubernetes.Interface, kind string, rl *relister) *cache.ListWatch {
	if kind == "configmaps" {
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
				return cs.CoreV1().ConfigMaps("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, o)
				if err != nil {
					return nil, err
				}
				return newClientGoWatch(w, rl), nil
			},
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
			return cs.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := cs.CoreV1().Pods("").Watch(ctx, o)
			if err != nil {
				return nil, err
			}
			return newClientGoWatch(w, rl), nil
		},
	}
}

// steadyMarker is the line a child writes to stderr when it waits for the steady phase's
// updates.
const steadyMarker = "benchreal: synced, waiting for updates"

// measureSteady announces the steady phase and samples the heap in use until the informer
// has seen n updates (n 0: no steady phase).
func measureSteady(ctx context.Context, res *childResult, n int, updates *atomic.Int64) error {
	if n <= 0 {
		return nil
	}
	heap := sampleHeap()
	seen := updates.Load()
	fmt.Fprintln(os.Stderr, steadyMarker)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for updates.Load()-seen < int64(n) {
		if sctx.Err() != nil {
			return fmt.Errorf("%d of %d updates in the steady phase", updates.Load()-seen, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	res.PeakHeapSteady = float64(heap.end())
	return nil
}
