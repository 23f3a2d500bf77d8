package informer

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// infoCalls is a handler that records every call with the EventInfo given before it.
type infoCalls struct {
	calls
	got chan EventInfo
}

func newInfoCalls() *infoCalls {
	return &infoCalls{calls: *newCalls(), got: make(chan EventInfo, 10000)}
}

func (c *infoCalls) EventInfo(info EventInfo) { c.got <- info }

// TestEventInfoGivesWatchEventsTheirArrival: a handler that implements EventInfoHandler
// hears, before each call, when the watch event behind it reached the informer; the
// objects of the initial list carry no arrival.
func TestEventInfoGivesWatchEventsTheirArrival(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s)
			mkCM(t, s, "default", "a", nil)
			opts := fastOptions(t)
			opts.mode = mode
			inf := New(configMaps(c), opts)
			h := newInfoCalls()
			reg, err := inf.AddEventHandler(h)
			if err != nil {
				t.Fatal(err)
			}
			start(t, inf)
			wait(t, reg.Synced(), "the registration to sync")
			h.next(t)
			if info := <-h.got; !info.Arrived.IsZero() {
				t.Fatalf("initial-list add arrived %v, want zero", info.Arrived)
			}
			before := time.Now()
			mkCM(t, s, "default", "b", nil)
			setData(t, s, "default", "a", "k", "v")
			if err := s.Delete("configmaps", "default", "b"); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				call := h.next(t)
				info := <-h.got
				if info.Arrived.Before(before) || info.Arrived.After(time.Now()) {
					t.Fatalf("%s: arrived %v, want between %v and now", call, info.Arrived, before)
				}
			}
		})
	}
}

// TestEventInfoOfMergedNotificationsIsTheOldest: a handler that fell behind gets its
// notifications of one key merged, and the merge carries the earliest arrival.
func TestEventInfoOfMergedNotificationsIsTheOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		r := &infoRecorder{recorder: recorder{gate: gate}}
		l := newListener[tobj](r, "test", nil, 1)
		l.start()
		defer func() { l.stop(); <-l.done }()
		l.add("block", add("block", 1))
		synctest.Wait()
		t0 := time.Now()
		for i, n := range []notification[tobj]{add("a", 1), update("a", 1, 2), update("a", 2, 3)} {
			n.arrived = t0.Add(time.Duration(i+1) * time.Second)
			l.add("a", n) // capacity 1: the second and third merge into the first
		}
		r.mu.Lock()
		r.gate = nil
		r.mu.Unlock()
		close(gate)
		synctest.Wait()
		want := []string{"add block@1 false", "add a@3 false"}
		if got := r.take(); !slices.Equal(got, want) {
			t.Fatalf("calls %v, want %v", got, want)
		}
		if got, want := r.infos, []time.Time{{}, t0.Add(time.Second)}; !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Fatalf("arrivals %v, want %v", got, want)
		}
	})
}

type infoRecorder struct {
	recorder
	infos []time.Time
}

func (r *infoRecorder) EventInfo(info EventInfo) {
	r.mu.Lock()
	r.infos = append(r.infos, info.Arrived)
	r.mu.Unlock()
}

// TestStatsListHandlerBacklogs: Stats names every handler with its delivery queue.
func TestStatsListHandlerBacklogs(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	for _, name := range []string{"first", "second"} {
		if _, err := inf.AddEventHandlerWithOptions(newCalls(), HandlerOptions{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	st := inf.Stats()
	var names []string
	for _, b := range st.HandlerBacklogs {
		names = append(names, fmt.Sprintf("%s:%d", b.Name, b.Pending))
	}
	if st.Handlers != 2 || !slices.Equal(names, []string{"first:0", "second:0"}) {
		t.Fatalf("Stats: %d handlers, backlogs %v", st.Handlers, names)
	}
}
