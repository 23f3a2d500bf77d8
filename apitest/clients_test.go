package apitest_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// peer is one named client of a server.
type peer struct {
	name string
	c    *apiclient.Client
	cms  *apiclient.Resource[*ConfigMap]
}

func newPeer(t *testing.T, s *apitest.Server, name string) *peer {
	t.Helper()
	cfg := s.ConfigFor(name)
	cfg.MaxRetries = -1
	cfg.WatchProtocol = apiclient.WatchChunked
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &peer{name: name, c: c, cms: apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default")}
}

func (p *peer) watch(t *testing.T, rv string) apiclient.Watcher[*ConfigMap] {
	t.Helper()
	w, err := p.cms.Watch(context.Background(), apiclient.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func (p *peer) names(t *testing.T) []string {
	t.Helper()
	l, err := p.cms.List(context.Background(), apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range l.Items {
		out = append(out, o.Name)
	}
	return out
}

// drain returns the events a watch has received so far (once everything has settled).
func drain(w apiclient.Watcher[*ConfigMap]) []string {
	var out []string
	for {
		synctest.Wait()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return append(out, "closed")
			}
			if ev.Type == apiclient.Error {
				st, _ := meta.AsStatus(ev.Err)
				out = append(out, "ERROR "+strconv.Itoa(int(st.Code)))
				continue
			}
			out = append(out, string(ev.Type)+" "+ev.Object.Name+" "+ev.Object.Data["v"])
		default:
			return out
		}
	}
}

func inMemory(t *testing.T) *apitest.Server {
	s := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
	t.Cleanup(s.Close)
	return s
}

func mustCreate(t *testing.T, s *apitest.Server, name, v string) {
	t.Helper()
	if _, err := s.Create("configmaps", cm(name, nil, map[string]string{"v": v})); err != nil {
		t.Fatal(err)
	}
}

func mustSet(t *testing.T, s *apitest.Server, name, v string) {
	t.Helper()
	if _, err := s.Mutate("configmaps", "default", name, func(o apitest.Object) { o["data"] = map[string]any{"v": v} }); err != nil {
		t.Fatal(err)
	}
}

// A killed client's watches end and its later requests are dropped; other clients go on.
func TestKillDropsTheClientOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := inMemory(t)
		a, b := newPeer(t, s, "a"), newPeer(t, s, "b")
		wa, wb := a.watch(t, s.ResourceVersion()), b.watch(t, s.ResourceVersion())
		synctest.Wait()
		if n := s.Clients().Kill("a"); n != 1 {
			t.Errorf("Kill aborted %d watches, want 1", n)
		}
		mustCreate(t, s, "x", "1")
		if got := drain(wa); !slices.Equal(got, []string{"closed"}) {
			t.Errorf("a's watch: %q", got)
		}
		if got := drain(wb); !slices.Equal(got, []string{"ADDED x 1"}) {
			t.Errorf("b's watch: %q", got)
		}
		if _, err := a.cms.Get(context.Background(), "x", apiclient.GetOptions{}); err == nil || meta.IsNotFound(err) {
			t.Errorf("a dead client's GET answered: %v", err)
		}
		if _, err := b.cms.Get(context.Background(), "x", apiclient.GetOptions{}); err != nil {
			t.Errorf("b: %v", err)
		}
		if !s.Clients().Killed("a") || s.Clients().Killed("b") {
			t.Error("Killed")
		}
		var dropped int
		for _, r := range s.Requests() {
			if r.UserAgent == "a" && r.Code == apitest.CodeDropped {
				dropped++
			}
		}
		if dropped != 1 {
			t.Errorf("%d dropped requests of a logged, want 1", dropped)
		}
	})
}

// A write hook sees every write of its client in order, and each action does what it says.
func TestWriteHookActions(t *testing.T) {
	for _, c := range []struct {
		act        apitest.WriteAction
		stored     bool
		code       int32 // the client's error, 0: a transport error
		deadAfter  bool
		wantErrNil bool
	}{
		{act: apitest.WriteProceed, stored: true, wantErrNil: true},
		{act: apitest.WriteConflict, code: 409},
		{act: apitest.WriteInternalError, code: 500},
		{act: apitest.WriteTimeout, code: 504},
		{act: apitest.WriteLostAnswer, stored: true},
		{act: apitest.WriteKillBefore, deadAfter: true},
		{act: apitest.WriteKillAfter, stored: true, deadAfter: true},
	} {
		t.Run(c.act.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := inMemory(t)
				a := newPeer(t, s, "a")
				var seen []string
				s.Clients().OnWrite("a", func(w apitest.Write) apitest.WriteAction {
					seen = append(seen, w.String())
					if len(seen) == 2 {
						return c.act
					}
					return apitest.WriteProceed
				})
				ctx := context.Background()
				if _, err := a.cms.Create(ctx, cm("one", nil, nil), apiclient.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				_, err := a.cms.Create(ctx, cm("two", nil, nil), apiclient.CreateOptions{})
				switch st, isStatus := meta.AsStatus(err); {
				case c.wantErrNil && err != nil:
					t.Errorf("second create: %v", err)
				case c.code != 0 && (!isStatus || st.Code != c.code):
					t.Errorf("second create: %v, want a %d", err, c.code)
				case !c.wantErrNil && c.code == 0 && (err == nil || isStatus):
					t.Errorf("second create: %v, want a transport error", err)
				}
				if _, err := s.Get("configmaps", "default", "two"); (err == nil) != c.stored {
					t.Errorf("stored: %v, want %v", err == nil, c.stored)
				}
				_, err = a.cms.Create(ctx, cm("three", nil, nil), apiclient.CreateOptions{})
				if dead := err != nil; dead != c.deadAfter || s.Clients().Killed("a") != c.deadAfter {
					t.Errorf("third create: %v, want dead %v", err, c.deadAfter)
				}
				want := []string{"create configmaps default/", "create configmaps default/"}
				if !c.deadAfter {
					want = append(want, want[0])
				}
				if !slices.Equal(seen, want) {
					t.Errorf("the hook saw %q, want %q", seen, want)
				}
			})
		})
	}
}

// A hold keeps one client's watch and lists at the state it was placed at; another client
// stays current; release delivers what was held, in order.
func TestHoldKeepsOneClientBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := inMemory(t)
		mustCreate(t, s, "x", "1")
		a, b := newPeer(t, s, "a"), newPeer(t, s, "b")
		rv := s.ResourceVersion()
		wa, wb := a.watch(t, rv), b.watch(t, rv)
		h, err := s.Clients().Hold("a", "configmaps")
		if err != nil {
			t.Fatal(err)
		}
		mustSet(t, s, "x", "2")
		mustCreate(t, s, "y", "1")
		if got := drain(wa); len(got) != 0 {
			t.Errorf("a's watch while held: %q", got)
		}
		if got := drain(wb); !slices.Equal(got, []string{"MODIFIED x 2", "ADDED y 1"}) {
			t.Errorf("b's watch: %q", got)
		}
		if got := a.names(t); !slices.Equal(got, []string{"x"}) {
			t.Errorf("a's list while held: %q", got)
		}
		if got := b.names(t); !slices.Equal(got, []string{"x", "y"}) {
			t.Errorf("b's list: %q", got)
		}
		if p := h.Pending(); len(p) != 2 || p[0].Name != "x" || p[1].Name != "y" || p[1].Type != apiclient.Added {
			t.Errorf("Pending %+v", p)
		}
		if h.RV() != rv {
			t.Errorf("RV %s, want %s", h.RV(), rv)
		}
		// Advance to the first held event: only it arrives.
		if err := h.Advance(h.Pending()[0].RV, apitest.InOrder); err != nil {
			t.Fatal(err)
		}
		if got := drain(wa); !slices.Equal(got, []string{"MODIFIED x 2"}) {
			t.Errorf("a's watch after Advance: %q", got)
		}
		h.Release(apitest.InOrder)
		if got := drain(wa); !slices.Equal(got, []string{"ADDED y 1"}) {
			t.Errorf("a's watch after Release: %q", got)
		}
		if got := a.names(t); !slices.Equal(got, []string{"x", "y"}) {
			t.Errorf("a's list after Release: %q", got)
		}
	})
}

// Merged delivers one event per object from the state before the hold to the state now.
func TestHoldReleasedMerged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := inMemory(t)
		mustCreate(t, s, "kept", "1")
		mustCreate(t, s, "gone", "1")
		mustCreate(t, s, "reborn", "1")
		a := newPeer(t, s, "a")
		wa := a.watch(t, s.ResourceVersion())
		h, _ := s.Clients().Hold("a", "")
		mustCreate(t, s, "new", "1")
		mustSet(t, s, "new", "2")
		mustSet(t, s, "kept", "2")
		mustSet(t, s, "kept", "3")
		mustCreate(t, s, "flash", "1")
		for _, n := range []string{"flash", "gone", "reborn"} {
			if err := s.Delete("configmaps", "default", n); err != nil {
				t.Fatal(err)
			}
		}
		mustCreate(t, s, "reborn", "2")
		h.Release(apitest.Merged)
		want := []string{"ADDED new 2", "MODIFIED kept 3", "DELETED gone 1", "MODIFIED reborn 2"}
		if got := drain(wa); !slices.Equal(got, want) {
			t.Errorf("merged events %q, want %q", got, want)
		}
		mustSet(t, s, "new", "3")
		if got := drain(wa); !slices.Equal(got, []string{"MODIFIED new 3"}) {
			t.Errorf("after the merge: %q", got)
		}
	})
}

// HoldAt serves a client's lists and watches from an older resourceVersion; Relist ends
// its watch with 410 so that it lists the state at the new one.
func TestHoldAtAndRelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := inMemory(t)
		mustCreate(t, s, "x", "1")
		old := s.ResourceVersion()
		mustSet(t, s, "x", "2")
		mustCreate(t, s, "y", "1")
		a := newPeer(t, s, "a")
		h, err := s.Clients().HoldAt("a", "configmaps", old)
		if err != nil {
			t.Fatal(err)
		}
		l, err := a.cms.List(context.Background(), apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].Data["v"] != "1" || l.ResourceVersion != old {
			t.Fatalf("list at the held view: %+v at %s, want x=1 at %s", l.Items, l.ResourceVersion, old)
		}
		w := a.watch(t, l.ResourceVersion)
		if got := drain(w); len(got) != 0 {
			t.Errorf("watch while held: %q", got)
		}
		h.Release(apitest.Relist)
		if got := drain(w); !slices.Equal(got, []string{"ERROR 410", "closed"}) {
			t.Errorf("watch after Relist: %q", got)
		}
		if got := a.names(t); !slices.Equal(got, []string{"x", "y"}) {
			t.Errorf("list after Relist: %q", got)
		}
		if _, err := s.Clients().HoldAt("a", "configmaps", "999999"); err == nil {
			t.Error("HoldAt a future resourceVersion")
		}
	})
}

// Changes lists every committed change of every resource in resourceVersion order.
func TestChanges(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	from := s.ResourceVersion()
	mustCreate(t, s, "x", "1")
	if _, err := s.Create("secrets", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "s"}}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "x", "2")
	if err := s.Delete("configmaps", "default", "x"); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Changes(from)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range ch {
		got = append(got, string(c.Type)+" "+c.Resource+" "+c.Name)
		if i > 0 && c.RV <= ch[i-1].RV {
			t.Errorf("changes out of order: %d after %d", c.RV, ch[i-1].RV)
		}
	}
	want := []string{"ADDED configmaps x", "ADDED secrets s", "MODIFIED configmaps x", "DELETED configmaps x"}
	if !slices.Equal(got, want) {
		t.Errorf("Changes %q, want %q", got, want)
	}
	if _, err := s.Changes("x"); err == nil {
		t.Error("Changes of a bad resourceVersion")
	}
}

// A merged window is delivered event by event when another hold of the client advances
// one event at a time: Pending lists the merged events only.
func TestMergedWindowStepByStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := inMemory(t)
		mustCreate(t, s, "a", "1")
		c := newPeer(t, s, "c")
		w := c.watch(t, s.ResourceVersion())
		gate, _ := s.Clients().Hold("c", "")
		window, _ := s.Clients().Hold("c", "configmaps")
		mustSet(t, s, "a", "2")
		mustCreate(t, s, "b", "1")
		mustSet(t, s, "a", "3")
		mustSet(t, s, "b", "2")
		window.Release(apitest.Merged)
		var got []string
		for p := gate.Pending(); len(p) > 0; p = gate.Pending() {
			got = append(got, string(p[0].Type)+" "+p[0].Name)
			if err := gate.Advance(p[0].RV, apitest.InOrder); err != nil {
				t.Fatal(err)
			}
			if ev := drain(w); len(ev) != 1 {
				t.Fatalf("one advance delivered %q", ev)
			}
		}
		if want := []string{"MODIFIED a", "ADDED b"}; !slices.Equal(got, want) {
			t.Errorf("pending %q, want %q", got, want)
		}
	})
}
