package apitest

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
)

// Per-client views: what one client's lists and watches show is held at a resourceVersion
// while the store, and every other client, move on, as a kube-apiserver whose watch cache
// lags behind etcd serves the clients connected to it. Writes and GETs stay current (a GET
// without resourceVersion is a quorum read from etcd on the kube-apiserver too).

// hold is one held view (s.mu guards it).
type hold struct {
	client   string
	resource string // canonical name; "" for every resource
	rv       uint64
}

// Hold is a client's view of a resource (or of every resource) held at a resourceVersion:
// its lists show the state at RV, its watches deliver no event after RV, and its bookmarks
// carry no later resourceVersion, until the hold advances or is released. Several holds
// may cover one resource: the oldest wins. Get one with Clients.Hold or Clients.HoldAt.
type Hold struct {
	s *Server
	h *hold
}

// Delivery says how a client's watches deliver the events a Hold held back once it moves.
type Delivery int

const (
	// InOrder delivers every held event, in order.
	InOrder Delivery = iota
	// Merged delivers only the latest state of each object the held events changed: one
	// ADDED, MODIFIED or DELETED per object (nothing for an object created and deleted
	// meanwhile; a MODIFIED for one deleted and created again), as an informer sees them
	// after a relist or when a slow handler's events were coalesced. The intermediate
	// states are never seen.
	Merged
	// Relist ends the client's watches of the held resources with 410 Expired: the client
	// lists again, and sees the state at the new resourceVersion, without the events.
	Relist
)

var deliveryNames = [...]string{"in-order", "merged", "relist"}

// String names the delivery ("merged").
func (d Delivery) String() string {
	if d >= 0 && int(d) < len(deliveryNames) {
		return deliveryNames[d]
	}
	return "Delivery(" + strconv.Itoa(int(d)) + ")"
}

// ctlWake wakes a watcher whose held view moved (applyCtl does nothing with it).
const ctlWake ctlKind = 1000

// mergedAway stands, in a batch of held events delivered Merged, for an event a later one
// of the same object supersedes: sendEvents skips it.
var mergedAway = &event{}

// Hold holds client's view of resource ("" for every resource) at the server's current
// resourceVersion: the client has seen everything so far and sees nothing more until the
// hold advances or is released.
func (c *Clients) Hold(client, resource string) (*Hold, error) {
	return c.holdAt(client, resource, 0, false)
}

// HoldAt holds client's view of resource ("" for every resource) at rv, an older
// resourceVersion than the server's: the client's lists and new watches show the state as
// it was at rv (a restarted process connected to a lagging kube-apiserver). It is meant
// for a client that has not seen anything newer; its watches already past rv wait. rv
// must still be in the server's history (not compacted).
func (c *Clients) HoldAt(client, resource, rv string) (*Hold, error) {
	n, st := parseRV(rv)
	if st != nil {
		return nil, fmt.Errorf("apitest: HoldAt: %s", st.Message)
	}
	return c.holdAt(client, resource, n, true)
}

func (c *Clients) holdAt(client, resource string, rv uint64, at bool) (*Hold, error) {
	s := c.s
	if client == "" {
		return nil, fmt.Errorf("apitest: a hold needs a client name")
	}
	s.mu.Lock()
	r, err := s.lookupLocked(resource)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	h := &hold{client: client}
	if r != nil {
		h.resource = r.typ.name()
	}
	switch {
	case !at:
		h.rv = s.rv
	case rv > s.rv:
		s.mu.Unlock()
		return nil, fmt.Errorf("apitest: HoldAt: resourceVersion %d is newer than the server's %d", rv, s.rv)
	case r != nil && rv < r.oldestRV():
		s.mu.Unlock()
		return nil, fmt.Errorf("apitest: HoldAt: resourceVersion %d of %s is compacted (oldest %d)", rv, h.resource, r.oldestRV())
	default:
		h.rv = rv
	}
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	s.recordFault(FaultRecord{Kind: FaultHold, Resource: h.resource, Detail: fmt.Sprintf("%s at %d", client, h.rv)})
	return &Hold{s: s, h: h}, nil
}

// capLocked returns the resourceVersion client's view of res is held at, if any; skip
// (possibly nil) is a hold not to count.
func (s *Server) capLocked(client string, res *resource, skip *hold) (uint64, bool) {
	var rv uint64
	held := false
	for _, h := range s.holds {
		if h == skip || h.client != client || (h.resource != "" && h.resource != res.typ.name()) {
			continue
		}
		if !held || h.rv < rv {
			rv, held = h.rv, true
		}
	}
	return rv, held
}

// viewRVLocked is the resourceVersion at which client sees res now: the server's, or the
// hold's (never older than the history can replay).
func (s *Server) viewRVLocked(client string, res *resource) uint64 {
	rv := s.rv
	if c, ok := s.capLocked(client, res, nil); ok && c < rv {
		rv = max(c, res.oldestRV())
	}
	return rv
}

// RV returns the resourceVersion the view is held at.
func (h *Hold) RV() string {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return strconv.FormatUint(h.h.rv, 10)
}

// HeldEvent is an event a Hold keeps from its client.
type HeldEvent struct {
	RV       string
	Type     apiclient.EventType
	Resource string
	// Namespace and Name are the object's.
	Namespace, Name string
}

// Pending returns the events the hold keeps from its client's open watches, oldest first:
// those after the hold's resourceVersion that no other hold of the client keeps back.
func (h *Hold) Pending() []HeldEvent {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[*resource]bool{}
	var out []HeldEvent
	var rvs []uint64
	for _, w := range s.watchers {
		res := w.res
		if w.client != h.h.client || seen[res] || (h.h.resource != "" && h.h.resource != res.typ.name()) {
			continue
		}
		seen[res] = true
		limit := s.rv
		if c, ok := s.capLocked(h.h.client, res, h.h); ok {
			limit = c
		}
		for i := res.seqAfter(h.h.rv) - res.base; i < uint64(len(res.events)); i++ {
			ev := res.events[i]
			if ev.rv > limit {
				break
			}
			if ev = s.viewEventLocked(h.h.client, res, ev); ev == mergedAway {
				continue
			}
			out = append(out, HeldEvent{RV: strconv.FormatUint(ev.rv, 10), Type: ev.typ, Resource: res.typ.name(),
				Namespace: ev.obj.namespace, Name: ev.obj.name})
			rvs = append(rvs, ev.rv)
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return rvs[idx[a]] < rvs[idx[b]] })
	sorted := make([]HeldEvent, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// Advance moves the hold to rv (newer than its own, at most the server's): the client's
// watches deliver the events up to rv as d says, and its lists show the state at rv.
func (h *Hold) Advance(rv string, d Delivery) error {
	n, st := parseRV(rv)
	if st != nil {
		return fmt.Errorf("apitest: Hold.Advance: %s", st.Message)
	}
	return h.move(n, d, false)
}

// Release ends the hold: the client's watches deliver what it held back as d says, and
// its lists are current again. Release after Release does nothing.
func (h *Hold) Release(d Delivery) {
	h.move(0, d, true)
}

func (h *Hold) move(rv uint64, d Delivery, release bool) error {
	s := h.s
	s.mu.Lock()
	if release {
		rv = s.rv
	}
	switch {
	case rv > s.rv:
		s.mu.Unlock()
		return fmt.Errorf("apitest: Hold.Advance: resourceVersion %d is newer than the server's %d", rv, s.rv)
	case !release && rv < h.h.rv:
		s.mu.Unlock()
		return fmt.Errorf("apitest: Hold.Advance: resourceVersion %d is older than the hold's %d", rv, h.h.rv)
	}
	if release {
		for i, x := range s.holds {
			if x == h.h {
				s.holds = append(s.holds[:i:i], s.holds[i+1:]...)
				break
			}
		}
	}
	from := h.h.rv
	h.h.rv = rv
	if d == Merged {
		s.mergeHeldLocked(h.h, from, rv)
	}
	var ws []*watcher
	for _, w := range s.watchers {
		if w.client == h.h.client && (h.h.resource == "" || h.h.resource == w.res.typ.name()) {
			ws = append(ws, w)
		}
	}
	s.mu.Unlock()
	for _, w := range ws {
		if d == Relist {
			last := w.lastRV.Load()
			w.push(watchCtl{kind: ctlError, status: apierr.Expired(fmt.Sprintf("too old resource version: %d (%d)", last, rv))})
			continue
		}
		w.push(watchCtl{kind: ctlWake})
	}
	what := "advanced"
	if release {
		what = "released"
	}
	s.recordFault(FaultRecord{Kind: FaultHoldRelease, Resource: h.h.resource,
		Detail: fmt.Sprintf("%s %s from %d to %d, %s", h.h.client, what, from, rv, d)})
	return nil
}

// mergeKey names the merged events of one client's view of one resource.
type mergeKey struct {
	client string
	res    *resource
}

// mergeHeldLocked records, for the events of h's resources in (from, to], what a Merged
// delivery sends instead of each: the event itself, a synthesized one standing for all of an
// object's events, or mergedAway. Watches consult it event by event (capBatchLocked), so a
// merged window is delivered in order, one event at a time if the client's view advances so.
func (s *Server) mergeHeldLocked(h *hold, from, to uint64) {
	for _, res := range s.order {
		if h.resource != "" && h.resource != res.typ.name() {
			continue
		}
		lo, hi := res.seqAfter(from), res.seqAfter(to)
		if lo < res.base || hi-lo < 2 {
			continue
		}
		window := res.events[lo-res.base : hi-res.base]
		merged := mergeEvents(window)
		k := mergeKey{h.client, res}
		for i, ev := range window {
			if merged[i] == ev {
				continue
			}
			if s.merges == nil {
				s.merges = map[mergeKey]map[uint64]*event{}
			}
			if s.merges[k] == nil {
				s.merges[k] = map[uint64]*event{}
			}
			s.merges[k][ev.rv] = merged[i]
		}
	}
}

// viewEventLocked is what client's watches of res send for ev: ev, its merged stand-in, or
// mergedAway.
func (s *Server) viewEventLocked(client string, res *resource, ev *event) *event {
	if m := s.merges[mergeKey{client, res}]; m != nil {
		if x, ok := m[ev.rv]; ok {
			return x
		}
	}
	return ev
}

// capBatchLocked keeps from events (taken from a watcher's cursor on) those its client may
// see, as a Merged delivery changed them; it also caps the bookmark's resourceVersion.
func (s *Server) capBatchLocked(w *watcher, events []*event, progressRV uint64) ([]*event, uint64) {
	limit, held := s.capLocked(w.client, w.res, nil)
	if held {
		i := sort.Search(len(events), func(i int) bool { return events[i].rv > limit })
		events = events[:i]
		progressRV = min(progressRV, limit)
	}
	if m := s.merges[mergeKey{w.client, w.res}]; m != nil {
		for i, ev := range events {
			if x, ok := m[ev.rv]; ok {
				events[i] = x
			}
		}
	}
	return events, progressRV
}

// mergeEvents returns events with each object's last event standing for all of them (the
// others are mergedAway), its type from the state before the first and after the last.
func mergeEvents(events []*event) []*event {
	first := map[string]int{}
	last := map[string]int{}
	for i, ev := range events {
		k := ev.obj.key
		if _, ok := first[k]; !ok {
			first[k] = i
		}
		last[k] = i
	}
	out := make([]*event, len(events))
	for i, ev := range events {
		k := ev.obj.key
		switch f := events[first[k]]; {
		case last[k] != i:
			out[i] = mergedAway
		case first[k] == i:
			out[i] = ev
		case f.prev == nil && ev.typ == apiclient.Deleted:
			out[i] = mergedAway // came and went unseen
		case f.prev == nil:
			out[i] = &event{typ: apiclient.Added, rv: ev.rv, obj: ev.obj}
		case ev.typ == apiclient.Deleted:
			out[i] = &event{typ: apiclient.Deleted, rv: ev.rv, obj: ev.obj, prev: f.prev}
		default:
			out[i] = &event{typ: apiclient.Modified, rv: ev.rv, obj: ev.obj, prev: f.prev}
		}
	}
	return out
}
