package reflector

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/testobj"
)

func key(o *testobj.ConfigMap) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// op is one call the recording store received.
type op struct {
	Kind  string // add, update, delete, replace, resync, begin, radd, finish, abort
	Key   string
	RV    string // the object's resourceVersion, or the list's for replace/finish
	Items int    // replace/finish: number of items
}

func (o op) String() string { return fmt.Sprintf("%s(%s@%s,%d)", o.Kind, o.Key, o.RV, o.Items) }

// recStore is the sink of the tests: a map plus a log of every call. It is not a fake of the
// API; the API is always apitest through apiclient. Waiters are woken on every call.
type recStore struct {
	mu      sync.Mutex
	objs    map[string]*testobj.ConfigMap
	ops     []op
	changed chan struct{}
	// failResync makes Resync fail.
	failResync error
	// replacement state (incremental mode): the keys and objects added so far
	seen    map[string]bool
	pending []*testobj.ConfigMap
	// rvs records UpdateResourceVersion calls.
	rvs []string
	// gates block Add/Update of a key until released (see gate).
	gates map[string]*gate
}

// gate blocks the store's Add or Update of one key: entered is closed when the reflector is
// inside the call, and the call returns when release is called. The test acts on the server
// while the reflector is held there.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func (s *recStore) gate(key string) (entered <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*gate{}
	}
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	s.gates[key] = g
	var once sync.Once
	return g.entered, func() { once.Do(func() { close(g.release) }) }
}

// pass blocks on the gate of key, if any (called without s.mu held).
func (s *recStore) pass(key string) {
	s.mu.Lock()
	g := s.gates[key]
	delete(s.gates, key)
	s.mu.Unlock()
	if g != nil {
		close(g.entered)
		<-g.release
	}
}

func (s *recStore) UpdateResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rvs = append(s.rvs, rv)
	s.record(op{Kind: "rv", RV: rv})
}

func (s *recStore) lastRV() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rvs) == 0 {
		return ""
	}
	return s.rvs[len(s.rvs)-1]
}

func newRecStore() *recStore {
	return &recStore{objs: map[string]*testobj.ConfigMap{}, changed: make(chan struct{})}
}

func (s *recStore) record(o op) {
	s.ops = append(s.ops, o)
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *recStore) Add(obj *testobj.ConfigMap) error {
	s.pass(key(obj))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[key(obj)] = obj
	s.record(op{Kind: "add", Key: key(obj), RV: obj.ResourceVersion})
	return nil
}

func (s *recStore) Update(obj *testobj.ConfigMap) error {
	s.pass(key(obj))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[key(obj)] = obj
	s.record(op{Kind: "update", Key: key(obj), RV: obj.ResourceVersion})
	return nil
}

func (s *recStore) Delete(obj *testobj.ConfigMap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, key(obj))
	s.record(op{Kind: "delete", Key: key(obj), RV: obj.ResourceVersion})
	return nil
}

func (s *recStore) Replace(list []*testobj.ConfigMap, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = make(map[string]*testobj.ConfigMap, len(list))
	for _, o := range list {
		s.objs[key(o)] = o
	}
	s.record(op{Kind: "replace", RV: rv, Items: len(list)})
	return nil
}

func (s *recStore) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record(op{Kind: "resync"})
	return s.failResync
}

// snapshot returns a copy of the ops and the keys→resourceVersion of the content.
func (s *recStore) snapshot() ([]op, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	content := make(map[string]string, len(s.objs))
	for k, o := range s.objs {
		content[k] = o.ResourceVersion
	}
	return append([]op(nil), s.ops...), content
}

func (s *recStore) count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.ops {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

// waitFor blocks until cond holds, or fails the test after waitTimeout. cond runs with the
// store's lock held and may read its fields. It wakes on every store call; it never polls.
func (s *recStore) waitFor(t *testing.T, what string, cond func(s *recStore) bool) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond(s)
		ch := s.changed
		ops := append([]op(nil), s.ops...)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; store calls: %v", what, ops)
		}
	}
}

// opsOf returns the ops of the given kinds, in order.
func opsOf(ops []op, kinds ...string) []op {
	var out []op
	for _, o := range ops {
		for _, k := range kinds {
			if o.Kind == k {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// lastOp returns the last op of one of kinds, and whether there is one.
func lastOp(ops []op, kinds ...string) (op, bool) {
	got := opsOf(ops, kinds...)
	if len(got) == 0 {
		return op{}, false
	}
	return got[len(got)-1], true
}

// waitTimeout bounds every wait of the tests; it is a failure deadline, not a synchronisation.
const waitTimeout = 60 * time.Second

// incrStore is a recStore that also implements IncrementalReplacer, updating in place.
type incrStore struct {
	*recStore
}

func (s incrStore) BeginReplace() (Replacement[*testobj.ConfigMap], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen != nil {
		return nil, errors.New("replacement already in progress")
	}
	s.seen = map[string]bool{}
	s.record(op{Kind: "begin"})
	return incrReplacement{s.recStore}, nil
}

type incrReplacement struct{ s *recStore }

func (r incrReplacement) Add(obj *testobj.ConfigMap) error {
	r.s.pass(key(obj))
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.seen == nil {
		return errors.New("Add outside a replacement")
	}
	r.s.seen[key(obj)] = true
	r.s.pending = append(r.s.pending, obj) // held until Finish: an Abort changes nothing
	r.s.record(op{Kind: "radd", Key: key(obj), RV: obj.ResourceVersion})
	return nil
}

func (r incrReplacement) Finish(rv string) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.seen == nil {
		return errors.New("Finish outside a replacement")
	}
	for k := range r.s.objs {
		if !r.s.seen[k] {
			delete(r.s.objs, k)
		}
	}
	for _, o := range r.s.pending {
		r.s.objs[key(o)] = o
	}
	n := len(r.s.seen)
	r.s.seen, r.s.pending = nil, nil
	r.s.record(op{Kind: "finish", RV: rv, Items: n})
	return nil
}

func (r incrReplacement) Abort() {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.seen, r.s.pending = nil, nil
	r.s.record(op{Kind: "abort"})
}
