package informer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// tobj is a minimal object for listener tests: a key and a version.
type tobj struct {
	key string
	rv  int
}

func (o tobj) String() string { return fmt.Sprintf("%s@%d", o.key, o.rv) }

// recorder is a handler that records calls as strings and can be gated: while gate is
// non-nil every call waits for a receive on it... callers close it to release everything.
type recorder struct {
	mu    sync.Mutex
	calls []string
	gate  chan struct{}
	panic func(call string) bool
}

func (r *recorder) record(call string) {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	gate, p := r.gate, r.panic
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if p != nil && p(call) {
		panic("boom: " + call)
	}
}

func (r *recorder) OnAdd(o tobj, initial bool) { r.record(fmt.Sprintf("add %v %v", o, initial)) }
func (r *recorder) OnUpdate(o, n tobj)         { r.record(fmt.Sprintf("update %v %v", o, n)) }
func (r *recorder) OnDelete(o tobj, unknown bool) {
	r.record(fmt.Sprintf("delete %v %v", o, unknown))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func keyOf(n notification[tobj]) string {
	if n.kind == kindDelete {
		return n.old.key
	}
	return n.new.key
}

func add(key string, rv int) notification[tobj] {
	return notification[tobj]{kind: kindAdd, new: tobj{key, rv}}
}
func initialAdd(key string, rv int) notification[tobj] {
	return notification[tobj]{kind: kindAdd, new: tobj{key, rv}, initial: true}
}
func update(key string, oldRV, newRV int) notification[tobj] {
	return notification[tobj]{kind: kindUpdate, old: tobj{key, oldRV}, new: tobj{key, newRV}}
}
func del(key string, rv int) notification[tobj] {
	return notification[tobj]{kind: kindDelete, old: tobj{key, rv}}
}

// blocked starts a listener of the given capacity whose handler is stuck in its first call
// (an add of "block") until release is called.
func blocked(t *testing.T, capacity int) (l *listener[tobj], r *recorder, release func()) {
	t.Helper()
	gate := make(chan struct{})
	r = &recorder{gate: gate}
	l = newListener[tobj](r, "test", nil, capacity)
	l.start()
	l.add("block", add("block", 1))
	synctest.Wait()
	if got := r.take(); !slices.Equal(got, []string{"add block@1 false"}) {
		t.Fatalf("first call = %v", got)
	}
	return l, r, func() {
		r.mu.Lock()
		r.gate = nil
		r.mu.Unlock()
		close(gate)
		synctest.Wait()
	}
}

func TestListenerDeliversEverythingInOrderBelowCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, r, release := blocked(t, 16)
		l.add("a", add("a", 1))
		l.add("a", update("a", 1, 2))
		l.add("b", add("b", 3))
		l.add("a", update("a", 2, 4))
		l.add("b", del("b", 3))
		if b := l.backlog(); b.Pending != 5 || b.Coalescing || b.Coalesced != 0 {
			t.Fatalf("backlog = %+v, want 5 pending, not coalescing", b)
		}
		release()
		want := []string{"add a@1 false", "update a@1 a@2", "add b@3 false", "update a@2 a@4", "delete b@3 false"}
		if got := r.take(); !slices.Equal(got, want) {
			t.Fatalf("calls = %v, want %v", got, want)
		}
		l.stop()
		<-l.done
	})
}

// TestListenerCoalescingAlgebra checks each rule of the documented table, with a listener
// whose capacity is 1 and whose handler is stuck, so every later notification coalesces.
func TestListenerCoalescingAlgebra(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []notification[tobj]
		want []string
	}{
		{"add+update=add(new)", []notification[tobj]{add("k", 1), update("k", 1, 2), update("k", 2, 3)}, []string{"add k@3 false"}},
		{"initial add keeps its flag", []notification[tobj]{initialAdd("k", 1), update("k", 1, 2)}, []string{"add k@2 true"}},
		{"add+delete=nothing", []notification[tobj]{add("k", 1), update("k", 1, 2), del("k", 2)}, nil},
		{"update+update=update(first old,last new)", []notification[tobj]{update("k", 1, 2), update("k", 2, 3), update("k", 3, 4)}, []string{"update k@1 k@4"}},
		{"update+delete=delete(final)", []notification[tobj]{update("k", 1, 2), del("k", 2)}, []string{"delete k@2 false"}},
		{"delete+add=delete,add", []notification[tobj]{del("k", 1), add("k", 5)}, []string{"delete k@1 false", "add k@5 false"}},
		{"delete+add+update=delete,add(last)", []notification[tobj]{del("k", 1), add("k", 5), update("k", 5, 6)}, []string{"delete k@1 false", "add k@6 false"}},
		{"delete+add+delete=delete(first)", []notification[tobj]{del("k", 1), add("k", 5), del("k", 5)}, []string{"delete k@1 false"}},
		{"unknown final state kept", []notification[tobj]{update("k", 1, 2), {kind: kindDelete, old: tobj{"k", 2}, unknown: true}}, []string{"delete k@2 true"}},
		{"other keys untouched", []notification[tobj]{update("k", 1, 2), add("j", 7), update("k", 2, 3)}, []string{"update k@1 k@3", "add j@7 false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, r, release := blocked(t, 1)
				// The listener's queue is empty: the first notification is queued (below
				// capacity) and every later one sees a full queue and coalesces.
				for _, n := range tc.in {
					l.add(keyOf(n), n)
				}
				release()
				if got := r.take(); !slices.Equal(got, tc.want) {
					t.Fatalf("calls = %q, want %q", got, tc.want)
				}
				l.stop()
				<-l.done
			})
		})
	}
}

func TestListenerBacklogIsBoundedByKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const capacity, keys = 8, 20
		l, r, release := blocked(t, capacity)
		for k := range keys {
			l.add(fmt.Sprint(k), add(fmt.Sprint(k), 0))
		}
		for rv := 1; rv <= 500; rv++ {
			for k := range keys {
				l.add(fmt.Sprint(k), update(fmt.Sprint(k), rv-1, rv))
			}
		}
		b := l.backlog()
		if b.Pending > capacity+keys || b.Peak > capacity+keys {
			t.Fatalf("backlog %+v exceeds capacity+keys = %d", b, capacity+keys)
		}
		if !b.Coalescing || b.Coalesced < 500*keys-capacity {
			t.Fatalf("backlog %+v: expected coalescing of almost every update", b)
		}
		release()
		// Every key ends at its last version, each seen exactly as add or add+update.
		view := map[string]string{}
		for _, c := range r.take() {
			f := strings.Fields(c)
			switch f[0] {
			case "add":
				view[strings.Split(f[1], "@")[0]] = f[1]
			case "update":
				view[strings.Split(f[2], "@")[0]] = f[2]
			}
		}
		for k := range keys {
			if got := view[fmt.Sprint(k)]; got != fmt.Sprintf("%d@500", k) {
				t.Fatalf("key %d ends at %q", k, got)
			}
		}
		if b := l.backlog(); b.Pending != 0 || b.Coalescing {
			t.Fatalf("drained backlog = %+v", b)
		}
		l.stop()
		<-l.done
	})
}

func TestListenerChurnOfUniqueKeysStaysBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _, release := blocked(t, 4)
		for i := range 10000 {
			k := fmt.Sprint("gen-", i)
			l.add(k, add(k, i))
			l.add(k, del(k, i))
		}
		if b := l.backlog(); b.Pending > 4 {
			t.Fatalf("create/delete churn left %d pending entries", b.Pending)
		}
		release()
		l.stop()
		<-l.done
	})
}

func TestListenerRecoversFromHandlerPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{panic: func(c string) bool { return strings.Contains(c, "bad") }}
		l := newListener[tobj](r, "panicky", discardLogger(), 0)
		l.start()
		l.add("bad", add("bad", 1))
		l.add("good", add("good", 2))
		l.add("bad", update("bad", 1, 3))
		synctest.Wait()
		want := []string{"add bad@1 false", "add good@2 false", "update bad@1 bad@3"}
		if got := r.take(); !slices.Equal(got, want) {
			t.Fatalf("calls = %v, want %v", got, want)
		}
		if b := l.backlog(); b.Panics != 2 || b.Delivered != 3 {
			t.Fatalf("backlog = %+v, want 2 panics of 3 deliveries", b)
		}
		l.stop()
		<-l.done
	})
}

func TestListenerSyncedAfterInitialAddsProcessed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		r := &recorder{gate: gate}
		l := newListener[tobj](r, "", nil, 2)
		l.start()
		l.add("a", initialAdd("a", 1))
		l.add("b", initialAdd("b", 2))
		l.add("c", initialAdd("c", 3))
		l.add("c", del("c", 3)) // coalesces with the pending initial add: both vanish
		l.setUpstreamSynced()
		synctest.Wait()
		if l.hasSynced() {
			t.Fatal("synced while the handler is still in its first initial add")
		}
		close(gate)
		<-l.synced
		if got := r.take(); !slices.Equal(got, []string{"add a@1 true", "add b@2 true"}) {
			t.Fatalf("calls = %v", got)
		}
		l.stop()
		<-l.done
	})
}

func TestListenerNotSyncedBeforeUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		l := newListener[tobj](r, "", nil, 0)
		l.start()
		l.add("a", initialAdd("a", 1))
		synctest.Wait()
		if l.hasSynced() {
			t.Fatal("synced before the informer synced")
		}
		l.setUpstreamSynced()
		if !l.hasSynced() {
			t.Fatal("not synced once the informer synced and the handler caught up")
		}
		l.stop()
		<-l.done
	})
}

func TestListenerStopWaitsForTheCallInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, r, release := blocked(t, 0)
		l.add("a", add("a", 1))
		l.stop()
		synctest.Wait()
		select {
		case <-l.done:
			t.Fatal("done before the handler call returned")
		default:
		}
		release()
		<-l.done
		if got := r.take(); len(got) != 0 {
			t.Fatalf("calls after stop = %v", got)
		}
		l.add("a", add("a", 2)) // ignored
		if b := l.backlog(); b.Pending != 0 {
			t.Fatalf("backlog after stop = %+v", b)
		}
	})
}

func TestListenerStoppedBeforeStartIsDone(t *testing.T) {
	l := newListener[tobj](&recorder{}, "", nil, 0)
	l.add("a", add("a", 1))
	l.stop()
	<-l.done
	l.start() // no goroutine: goleak would see it
}

// TestListenerReplayedViewMatchesModel drives a listener with a random stream of
// notifications from a model cache, with a handler that is randomly slow, and checks after
// draining that the handler's replayed view equals the model, that every update's old object
// is what the handler saw last, and that no handler call concerns a key it does not know.
func TestListenerReplayedViewMatchesModel(t *testing.T) {
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkListenerModel(t, seed) })
		})
	}
}

type viewHandler struct {
	t    *testing.T
	mu   sync.Mutex
	view map[string]tobj
	slow chan struct{}
	rnd  *rand.Rand
}

func (h *viewHandler) maybeStall() {
	if h.rnd.IntN(4) == 0 {
		<-h.slow
	}
}

func (h *viewHandler) OnAdd(o tobj, _ bool) {
	h.mu.Lock()
	if _, ok := h.view[o.key]; ok {
		h.t.Errorf("add of %v, already in view", o)
	}
	h.view[o.key] = o
	h.mu.Unlock()
	h.maybeStall()
}

func (h *viewHandler) OnUpdate(old, o tobj) {
	h.mu.Lock()
	if v, ok := h.view[o.key]; !ok || v != old {
		h.t.Errorf("update %v→%v, view has %v (%v)", old, o, v, ok)
	}
	h.view[o.key] = o
	h.mu.Unlock()
	h.maybeStall()
}

func (h *viewHandler) OnDelete(o tobj, _ bool) {
	h.mu.Lock()
	if _, ok := h.view[o.key]; !ok {
		h.t.Errorf("delete of %v, not in view", o)
	}
	delete(h.view, o.key)
	h.mu.Unlock()
	h.maybeStall()
}

func checkListenerModel(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	h := &viewHandler{t: t, view: map[string]tobj{}, slow: make(chan struct{}), rnd: rand.New(rand.NewPCG(seed, 2))}
	l := newListener[tobj](h, "", nil, 1+rnd.IntN(8))
	l.start()
	model := map[string]tobj{}
	rv := 0
	for range 2000 {
		if rnd.IntN(3) == 0 {
			// Let the handler make some progress.
			for range rnd.IntN(5) {
				select {
				case h.slow <- struct{}{}:
				default:
				}
				synctest.Wait()
			}
		}
		k := fmt.Sprint("k", rnd.IntN(6))
		rv++
		old, exists := model[k]
		switch {
		case !exists:
			model[k] = tobj{k, rv}
			l.add(k, add(k, rv))
		case rnd.IntN(3) == 0:
			delete(model, k)
			l.add(k, notification[tobj]{kind: kindDelete, old: tobj{k, rv}, unknown: rnd.IntN(2) == 0})
		default:
			model[k] = tobj{k, rv}
			l.add(k, update(k, old.rv, rv))
		}
	}
	// Drain: feed the stalls until the queue is empty.
	for l.backlog().Pending > 0 {
		select {
		case h.slow <- struct{}{}:
		default:
		}
		synctest.Wait()
	}
	close(h.slow)
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.view) != len(model) {
		t.Fatalf("view %v, model %v", h.view, model)
	}
	for k, v := range model {
		if h.view[k] != v {
			t.Fatalf("view[%s] = %v, model %v", k, h.view[k], v)
		}
	}
	l.stop()
	<-l.done
}
