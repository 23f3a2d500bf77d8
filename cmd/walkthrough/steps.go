package walkthrough

import (
	"context"
	"fmt"
	"strings"
)

// step is one step of the scenario: what it does, and what the step list says about it.
type step struct {
	title string
	// intro and outro are the step list's prose before and after the step's reports.
	intro, outro string
	run          func(s *scenario, ctx context.Context) error
	// expect are texts some report of the step must contain: the prose relies on them, so
	// a run without them fails instead of explaining what did not happen.
	expect []string
}

// steps is the scenario.
var steps = []step{
	{
		title: "A streaming list fills the cache",
		intro: "The API server holds `walk/a`, `walk/b` and `walk/c` before anything starts. The controller's " +
			"handler and a second, slow handler are registered before the informer runs, so both hear the initial list.",
		outro: "The reflector asked for a streaming list (`sendInitialEvents=true`): the objects come as ADDED events and " +
			"a BOOKMARK annotated `k8s.io/initial-events-end` closes them, at the list's resourceVersion. The reflector " +
			"hands them to the DeltaFIFO one by one as an incremental relist (held until the end bookmark, so a list " +
			"that breaks changes nothing), which pops them as ReplacedChunk deltas and then a ReplacedEnd. Every handler " +
			"hears `OnAdd(obj, isInInitialList)`; the controller queues each Request at a low priority (initial lists " +
			"yield to live changes) and reconciles once its handler has seen the whole list.",
		run: func(s *scenario, ctx context.Context) error {
			s.action("start the informer")
			go s.inf.Run(ctx)
			return s.settle(func() bool { return s.reconciles("walk/a", "walk/b", "walk/c") >= 3 && s.slowReg.HasSynced() })
		},
		expect: []string{"sendInitialEvents=true", "initial-events-end", "ReplacedEnd", "isInInitialList", "priority -100"},
	},
	{
		title: "A MODIFIED event through every stage",
		intro: "One change, followed from the API server to the reconcile and its writes.",
		outro: "The watch event is an Updated delta in the DeltaFIFO (an AtomicFIFO: one queue position per event, in " +
			"arrival order); PopBatch hands it to the informer, which writes the cache first and then queues an " +
			"`update` in each handler's listener. The controller's handler adds the Request, the worker takes it, " +
			"and the reconcile's trace has the watch event as its parent. The reconcile does not look at the event: " +
			"it reads `walk/a` from the cache and writes the copy.",
		run: func(s *scenario, ctx context.Context) error {
			return s.change("a", "green", nil)
		},
		expect: []string{"Updated walk/a", "OnUpdate(walk/a", "its trace begins at the watch event"},
	},
	{
		title: "A slow handler's listener coalesces",
		intro: "The slow handler now takes its time (the scenario holds its first call) while `walk/b` changes three " +
			"times. Its listener may fall `BufferSize` (here 1) notifications behind before it coalesces.",
		outro: "The first update reached the handler, which is still busy; the second waits in the listener; the third " +
			"finds the listener at its buffer size and is merged into the pending one (first old state, last new state), " +
			"so the handler hears two calls for three changes, and never the middle state. The controller's own handler " +
			"is never behind: it only enqueues, so its listener never coalesces, and neither the informer nor the " +
			"other handler waited for the slow one.",
		run: func(s *scenario, ctx context.Context) error {
			s.rc.showBacklog.Store(true)
			defer s.rc.showBacklog.Store(false)
			g := &gate{ch: make(chan struct{})}
			s.mu.Lock()
			s.slowGate = g
			s.mu.Unlock()
			for i, color := range []string{"blue", "cyan", "teal"} {
				if err := s.change("b", color, nil); err != nil {
					return err
				}
				if i == 0 && !s.blocked(g) {
					return fmt.Errorf("the slow handler is not busy")
				}
			}
			return s.open(&s.slowGate, "let the slow handler return")
		},
		expect: []string{"(1 pending)", "listener coalesces", "the slow handler returns"},
	},
	{
		title: "The workqueue deduplicates a Request that changes during its reconcile",
		intro: "Now a reconcile of `walk/c` takes its time (the scenario holds it) while `walk/c` changes twice more.",
		outro: "The queue keeps each Request in two sets, dirty (needs a reconcile) and processing (a worker has it): " +
			"the Add during the reconcile only marks `walk/c` dirty, so no second worker may take it; the next Add " +
			"finds it dirty already and does nothing. At Done the dirty Request goes back in the queue and is " +
			"reconciled once more, for both changes: its trace is the older event, linked to the newer one.",
		run: func(s *scenario, ctx context.Context) error {
			g := &gate{key: "walk/c", ch: make(chan struct{})}
			s.mu.Lock()
			s.reconGate = g
			s.mu.Unlock()
			if err := s.change("c", "black", nil); err != nil {
				return err
			}
			if !s.blocked(g) {
				return fmt.Errorf("the reconcile of walk/c is not running")
			}
			for _, color := range []string{"white", "grey"} {
				if err := s.change("c", color, nil); err != nil {
					return err
				}
			}
			return s.open(&s.reconGate, "let the reconcile of walk/c return")
		},
		expect: []string{"marked dirty, queued again at Done", "deduplicated", "dirty → queued again", "one reconcile for 2 watch events"},
	},
	{
		title: "A 410 and the relist",
		intro: "The watch stalls (the API server holds its events) while `walk/b` is deleted and `walk/d` created, and " +
			"the server compacts its history past the informer's resourceVersion; then the watch expires.",
		outro: "The watch ends with a 410 Expired: the events the informer missed are gone from the server's history, " +
			"so the reflector cannot resume and lists again (a streaming list again). The incremental relist keeps " +
			"the objects the cache already has at the same resourceVersion (nothing of them is queued or applied) and " +
			"holds the new one; at the end bookmark the ReplacedEnd deletes what the list lacked: `walk/b`, whose " +
			"handlers hear `OnDelete(obj, finalStateUnknown)` with the last state the cache had, a tombstone.",
		run: func(s *scenario, ctx context.Context) error {
			s.action("apitest: the watch stalls (Faults().StallWatches)")
			release, _, err := s.srv.Faults().StallWatches("configmaps", 0)
			if err != nil {
				return err
			}
			s.action("delete walk/b")
			if err := s.srv.Delete("configmaps", nsWatched, "b"); err != nil {
				return err
			}
			s.action("create walk/d")
			if _, err := s.srv.Create("configmaps", newConfigMap("d", "red")); err != nil {
				return err
			}
			s.action("apitest: compact the history (Compact), then the watch expires (Faults().ExpireWatches)")
			if err := s.srv.Compact("configmaps"); err != nil {
				return err
			}
			if _, err := s.srv.Faults().ExpireWatches("configmaps"); err != nil {
				return err
			}
			release()
			return s.settle(func() bool { return s.cached("walk/d") && !s.cached("walk/b") && s.reconciles("walk/b", "walk/d") >= 4 })
		},
		expect: []string{"ERROR 410", "410 Expired", "kept, nothing queued", "tombstone", "finalStateUnknown"},
	},
	{
		title: "A resync",
		intro: "The slow handler asked for a resync every minute; the scenario lets a minute of fake time pass.",
		outro: "A resync re-delivers every cached object to the handlers that asked for one, as `OnUpdate(obj, obj)`. " +
			"informerkit generates it from the cache under the informer's delivery lock: it never reaches the " +
			"DeltaFIFO, the server or the other handlers (the controller's handler asked for none).",
		run: func(s *scenario, ctx context.Context) error {
			s.action("wait for the slow handler's resync period (1m)")
			return s.settle(func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.resyncs >= 3
			})
		},
		expect: []string{"resync due for slow"},
	},
}

// change sets walk/name's color, as a client would, and waits for the stages to settle.
func (s *scenario) change(name, color string, extra map[string]string) error {
	s.action("update walk/%s: color=%s", name, color)
	data := map[string]string{"color": color}
	for k, v := range extra {
		data[k] = v
	}
	if err := s.update(name, data); err != nil {
		return err
	}
	return s.settle(nil)
}

// open opens the gate *gp and waits for the stages to settle.
func (s *scenario) open(gp **gate, text string) error {
	s.mu.Lock()
	g := *gp
	*gp = nil
	s.mu.Unlock()
	g.opened = s.action("%s", text)
	close(g.ch)
	return s.settle(nil)
}

// blocked reports whether the gate holds a call.
func (s *scenario) blocked(g *gate) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return g.blocked
}

// reconciles returns the reconciles of the given Requests so far.
func (s *scenario) reconciles(reqs ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range reqs {
		n += s.reconciled[r]
	}
	return n
}

// cached reports whether the informer's cache holds key.
func (s *scenario) cached(key string) bool {
	_, ok, _ := s.inf.GetIndexer().GetByKey(key)
	return ok
}

// check returns an error unless some report of the step contains each expected text.
func (st step) check(rs []*report) error {
	for _, want := range st.expect {
		found := false
		for _, r := range rs {
			if strings.Contains(r.text, want) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no report says %q", want)
		}
	}
	return nil
}
