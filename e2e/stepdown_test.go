package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// stepWrite is one write a leader's reconcile made: when it was sent and answered, and the
// resourceVersion the server gave it (etcd's revision: the server's order of writes).
type stepWrite struct {
	who        string
	sent, done time.Time
	rv         int64
}

// stepLedger gathers the writes of both managers.
type stepLedger struct {
	mu     sync.Mutex
	writes []stepWrite
	first  map[string][]time.Time // reconcile starts, per manager
}

func (l *stepLedger) add(w stepWrite) {
	l.mu.Lock()
	l.writes = append(l.writes, w)
	l.mu.Unlock()
}

// between returns who's writes sent in [from, to).
func (l *stepLedger) between(who string, from, to time.Time) []stepWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []stepWrite
	for _, w := range l.writes {
		if w.who == who && !w.sent.Before(from) && w.sent.Before(to) {
			out = append(out, w)
		}
	}
	return out
}

// blockLeases is the transport of a manager whose Lease renewals can be cut off: while
// blocked, its writes of Leases fail before they reach the server.
type blockLeases struct {
	next    http.RoundTripper
	blocked *atomic.Bool
}

func (b blockLeases) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.blocked.Load() && r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/leases/") {
		return nil, errors.New("e2e: lease writes blocked")
	}
	return b.next.RoundTrip(r)
}

// TestStepDownHandOffOnKubeAPIServer runs two Managers with LeaderElectionStepDown and the
// default Lease timings (15 s, 10 s, 2 s) on the real kube-apiserver, each reconciling the
// ConfigMaps of a namespace by creating one in another namespace every second per object.
// The leader a's Lease renewals are cut off: it steps down at its renew deadline (its
// in-flight reconcile cancelled with ErrLeaderElectionLost, its write refused), the standby b
// takes over once the Lease has expired; a's renewals come back, b stops, and a leads a
// second term from its warm caches. The writes of the three terms do not overlap, in time
// nor in the server's order (resourceVersions); neither Manager lists again; the hand-off
// (a's loss to b's first reconcile) is logged.
func TestStepDownHandOffOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns, out := newNamespace(t, c), newNamespace(t, c)
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*kitConfigMap](), kinds.ConfigMap); err != nil {
		t.Fatal(err)
	}
	const objects = 20
	admin, err := apiclient.New(mustConfig(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cms := apiclient.NewResource[*kitConfigMap](admin, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	for i := range objects + 1 {
		name := fmt.Sprintf("cm-%02d", i)
		if i == objects {
			name = "hold"
		}
		o := &kitConfigMap{TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: name}}
		if _, err := cms.Create(t.Context(), o, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	l := &stepLedger{first: map[string][]time.Time{}}
	held := make(chan error, 1)
	var heldAt atomic.Int64
	blocked := &atomic.Bool{}
	mk := func(who string) (*controller.Manager, func() error) {
		cfg := mustConfig(t, c)
		cfg.UserAgent = "stepdown-" + who
		if who == "a" {
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return blockLeases{next: rt, blocked: blocked} }
		}
		m, err := controller.NewManager(cfg, controller.ManagerOptions{
			Kinds: reg, Logger: slog.New(slog.DiscardHandler), SkipPermissionCheck: true,
			InformerOptions: informer.FactoryOptions{Namespace: ns},
			LeaderElection:  true, LeaderElectionID: "stepdown", LeaderElectionNamespace: ns, LeaderElectionIdentity: who,
			LeaderElectionStepDown: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		typed := client.TypedFor[*kitConfigMap](m.Client())
		var n atomic.Int64
		var holding atomic.Bool
		write := func(ctx context.Context) error {
			sent := time.Now()
			o, err := typed.Create(ctx, &kitConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: out, Name: fmt.Sprintf("%s-%d", who, n.Add(1))}}, client.CreateOptions{})
			if err != nil {
				return err
			}
			rv, _ := strconv.ParseInt(o.ResourceVersion, 10, 64)
			l.add(stepWrite{who: who, sent: sent, done: time.Now(), rv: rv})
			return nil
		}
		err = controller.NewBuilder(m, "stepdown").For(controller.Primary[*kitConfigMap]()).
			WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				l.mu.Lock()
				l.first[who] = append(l.first[who], time.Now())
				l.mu.Unlock()
				if req.Name == "hold" {
					if who == "a" && !holding.Swap(true) {
						<-ctx.Done()
						heldAt.Store(time.Now().UnixNano())
						cause := context.Cause(ctx)
						if err := write(ctx); err == nil {
							held <- fmt.Errorf("a write after the term ended (%v) was accepted", cause)
						} else {
							held <- cause
						}
					}
					return controller.Result{}, nil
				}
				if err := write(ctx); err != nil && ctx.Err() == nil {
					return controller.Result{}, err
				}
				return controller.Result{RequeueAfter: time.Second}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Start(ctx) }()
		var once sync.Once
		var serr error
		stop := func() error {
			once.Do(func() { cancel(); serr = <-done })
			return serr
		}
		t.Cleanup(func() { _ = stop() })
		return m, stop
	}
	wait := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond) // polls the state asserted next
		}
	}
	lists := func(m *controller.Manager) (n uint64) {
		for _, inf := range m.Factory().Informers() {
			n += inf.Stats().Reflector.Lists
		}
		return n
	}

	a, stopA := mk("a")
	wait("a to lead", time.Minute, func() bool { return a.IsLeader() && len(l.between("a", time.Time{}, time.Now())) > 0 })
	b, stopB := mk("b")
	wait("b's caches", time.Minute, func() bool { return lists(b) > 0 && b.Factory().WaitForCacheSync(t.Context()) == nil })
	listsA, listsB := lists(a), lists(b)

	blockedAt := time.Now()
	blocked.Store(true)
	var cause error
	select {
	case cause = <-held:
	case <-time.After(time.Minute):
		t.Fatal("a did not step down")
	}
	lostAt := time.Unix(0, heldAt.Load())
	if !errors.Is(cause, controller.ErrLeaderElectionLost) {
		t.Fatalf("a's held reconcile ended with %v, want ErrLeaderElectionLost and its write refused", cause)
	}
	wait("b's first write", time.Minute, func() bool { return len(l.between("b", time.Time{}, time.Now())) > 0 })
	bTerm := l.between("b", time.Time{}, time.Now())[0]
	l.mu.Lock()
	firstB := l.first["b"][0]
	l.mu.Unlock()
	t.Logf("renewals cut at 0; a stepped down at %v; b reconciled at %v (hand-off %v after the loss), b's first write answered at %v",
		lostAt.Sub(blockedAt).Round(time.Millisecond), firstB.Sub(blockedAt).Round(time.Millisecond),
		firstB.Sub(lostAt).Round(time.Millisecond), bTerm.done.Sub(blockedAt).Round(time.Millisecond))
	if a.IsLeader() {
		t.Fatal("a leads while b does")
	}

	blocked.Store(false)
	time.Sleep(3 * controller.DefaultRetryPeriod) // b's term goes on; a campaigns, and waits
	if a.IsLeader() {
		t.Fatal("a took the Lease from b")
	}
	stoppedB := time.Now()
	if err := stopB(); err != nil {
		t.Fatalf("b's Start = %v", err)
	}
	wait("a's second term", time.Minute, func() bool { return len(l.between("a", stoppedB, time.Now())) > 0 })
	l.mu.Lock()
	firstA2 := l.first["a"][len(l.first["a"])-1]
	for _, s := range l.first["a"] {
		if s.After(stoppedB) {
			firstA2 = s
			break
		}
	}
	l.mu.Unlock()
	t.Logf("b stopped (released); a reconciled again %v later", firstA2.Sub(stoppedB).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // a's second term writes
	endA := time.Now()
	if err := stopA(); err != nil {
		t.Fatalf("a's Start = %v", err)
	}

	// The terms, in time and in the server's order.
	terms := [][]stepWrite{l.between("a", time.Time{}, lostAt), l.between("b", time.Time{}, stoppedB), l.between("a", stoppedB, endA)}
	if refused := l.between("a", lostAt, stoppedB); len(refused) > 0 {
		t.Errorf("a wrote %d times between its step-down and its second term: %+v", len(refused), refused)
	}
	for i, term := range terms {
		if len(term) == 0 {
			t.Fatalf("term %d made no write", i)
		}
	}
	for i := 1; i < len(terms); i++ {
		prev, next := terms[i-1], terms[i]
		lastDone := slices.MaxFunc(prev, func(x, y stepWrite) int { return x.done.Compare(y.done) })
		firstSent := slices.MinFunc(next, func(x, y stepWrite) int { return x.sent.Compare(y.sent) })
		maxRV := slices.MaxFunc(prev, func(x, y stepWrite) int { return int(x.rv - y.rv) }).rv
		minRV := slices.MinFunc(next, func(x, y stepWrite) int { return int(x.rv - y.rv) }).rv
		t.Logf("term %d (%s, %d writes) ended %v before term %d (%s, %d writes) began; resourceVersions %d < %d",
			i-1, prev[0].who, len(prev), firstSent.sent.Sub(lastDone.done).Round(time.Millisecond), i, next[0].who, len(next), maxRV, minRV)
		if !lastDone.done.Before(firstSent.sent) || maxRV >= minRV {
			t.Errorf("terms %d and %d overlap: last write of one answered at %v, first of the next sent at %v; resourceVersions %d, %d",
				i-1, i, lastDone.done, firstSent.sent, maxRV, minRV)
		}
	}
	if got := lists(a); got != listsA {
		t.Errorf("a's informers listed %d times, %d before it stepped down: step-down must keep the caches", got, listsA)
	}
	if got := lists(b); got != listsB {
		t.Errorf("b's informers listed %d times, %d while standing by", got, listsB)
	}
}
