package informer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// observations collects what Options.Observe reports, one line per observation.
type observations struct {
	mu    sync.Mutex
	lines []string
}

func (o *observations) observe(ob Observation[*testobj.ConfigMap]) {
	rv := ""
	if ob.Object != nil {
		rv = ob.Object.ResourceVersion
	}
	line := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s", ob.Stage, ob.Delta, ob.Key, ob.Notification, ob.Handler)), " ")
	if ob.Object != nil && ob.Old != nil {
		line += fmt.Sprintf(" %s→%s", ob.Old.ResourceVersion, rv)
	}
	o.mu.Lock()
	o.lines = append(o.lines, line)
	o.mu.Unlock()
}

// take returns the lines so far and forgets them.
func (o *observations) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.lines
	o.lines = nil
	return l
}

// TestObserveFollowsAnObjectThroughEveryStage: Options.Observe hears each stage of an
// object's way, in order: the initial list (a ReplacedChunk and the ReplacedEnd), an
// update and a delete, each queued, popped, cached, queued for the handler and delivered.
func TestObserveFollowsAnObjectThroughEveryStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServerWithOptions(t, apitest.Options{InMemory: true})
		c := newClient(t, s)
		a := mkCM(t, s, "default", "a", nil)
		obs := &observations{}
		opts := fastOptions(t)
		opts.Observe = obs.observe
		inf := New(configMaps(c), opts)
		if _, err := inf.AddEventHandlerWithOptions(ResourceEventHandlerFuncs[*testobj.ConfigMap]{}, HandlerOptions{Name: "h"}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer func() { cancel(); <-inf.Done() }()
		go inf.Run(ctx)
		synctest.Wait()
		got := obs.take()
		want := []string{"queued ReplacedChunk default/a", "queued ReplacedEnd", "popped ReplacedChunk default/a",
			"cached default/a add", "notified default/a add h", "delivered default/a add h", "popped ReplacedEnd"}
		if !sameElements(got, want) || slices.Index(got, "queued ReplacedEnd") > slices.Index(got, "popped ReplacedEnd") {
			t.Fatalf("initial list: got %q, want %q in a causal order", got, want)
		}
		b := setData(t, s, "default", "a", "k", "v")
		synctest.Wait()
		up := a.ResourceVersion() + "→" + b.ResourceVersion()
		want = []string{"queued Updated default/a", "popped Updated default/a", "cached default/a update " + up,
			"notified default/a update h " + up, "delivered default/a update h " + up}
		if got := obs.take(); !slices.Equal(got, want) {
			t.Fatalf("update: got %q, want %q", got, want)
		}
		if err := s.Delete("configmaps", "default", "a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		want = []string{"queued Deleted default/a", "popped Deleted default/a", "cached default/a delete",
			"notified default/a delete h", "delivered default/a delete h"}
		if got := obs.take(); !slices.Equal(got, want) {
			t.Fatalf("delete: got %q, want %q", got, want)
		}
	})
}

func sameElements(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestObserveReportsCoalescing: a listener that is BufferSize behind reports the
// notification it merges (and what the pending one became), and the delivery of the merge.
func TestObserveReportsCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		r := &recorder{gate: gate}
		var mu sync.Mutex
		var got []string
		l := newListener[tobj](r, "slow", nil, 1)
		l.observe = func(o Observation[tobj]) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s %s %s pending=%d", o.Stage, o.Key, o.Notification, o.Pending))
			mu.Unlock()
		}
		l.start()
		defer func() { l.stop(); <-l.done }()
		l.add("a", add("a", 1))
		synctest.Wait() // the handler is busy with it
		l.add("a", update("a", 1, 2))
		l.add("a", update("a", 2, 3)) // one behind: merged into the pending update
		close(gate)
		synctest.Wait()
		want := []string{"notified a add pending=1", "delivered a add pending=0", "notified a update pending=1",
			"coalesced a update pending=1", "delivered a update pending=0"}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
