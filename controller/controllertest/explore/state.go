package explore

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// The journal: the server's changes, read from apitest.Server.Changes after each step of
// the run, kept in order and applied to a mirror of the store, on which the invariants are
// checked after every change, and from which the state at any resourceVersion (what the
// controller's view held) is read back.

type objKey struct{ resource, namespace, name string }

func (k objKey) String() string { return k.resource + " " + objectName(k.namespace, k.name) }

type version struct {
	rv      uint64
	raw     json.RawMessage // nil: deleted
	typ     apiclient.EventType
	changed time.Time
}

type journal struct {
	srv  *apitest.Server
	last uint64
	// cur is the mirror (resource → key → object); versions each object's history.
	cur      map[string]map[objKey]json.RawMessage
	versions map[objKey][]version
	changes  []apitest.Change
	// quiet: resources whose changes are not activity (Leases, Events); lastActive is the
	// fake time of the last change of another.
	quiet      map[string]bool
	lastActive time.Time
	names      map[string]string // resource references → the server's names
	mu         sync.Mutex        // guards names (State is read by invariants only)
}

func newJournal(srv *apitest.Server) *journal {
	return &journal{srv: srv, cur: map[string]map[objKey]json.RawMessage{}, versions: map[objKey][]version{},
		quiet: map[string]bool{"events": true, "events.events.k8s.io": true, "leases.coordination.k8s.io": true},
		names: map[string]string{}, lastActive: time.Now()}
}

// poll reads the changes committed since the last poll and applies each to the mirror,
// calling each(change) after it.
func (j *journal) poll(each func(apitest.Change)) error {
	chs, err := j.srv.Changes(uintString(j.last))
	if err != nil {
		return err
	}
	for _, c := range chs {
		j.last = c.RV
		j.changes = append(j.changes, c)
		k := objKey{c.Resource, c.Namespace, c.Name}
		m := j.cur[c.Resource]
		if m == nil {
			m = map[objKey]json.RawMessage{}
			j.cur[c.Resource] = m
		}
		v := version{rv: c.RV, typ: c.Type, changed: time.Now()}
		if c.Type == apiclient.Deleted {
			delete(m, k)
		} else {
			m[k] = c.Object
			v.raw = c.Object
		}
		j.versions[k] = append(j.versions[k], v)
		if !j.quiet[c.Resource] {
			j.lastActive = time.Now()
		}
		if each != nil {
			each(c)
		}
	}
	return nil
}

// at returns the object k as it was at rv (false: it did not exist).
func (j *journal) at(k objKey, rv uint64) (json.RawMessage, bool) {
	vs := j.versions[k]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rv > rv }) - 1
	if i < 0 || vs[i].raw == nil {
		return nil, false
	}
	return vs[i].raw, true
}

// between returns the changes of resources after from up to to, oldest first.
func (j *journal) between(from, to uint64, resources map[string]bool) []apitest.Change {
	i := sort.Search(len(j.changes), func(i int) bool { return j.changes[i].RV > from })
	var out []apitest.Change
	for ; i < len(j.changes) && j.changes[i].RV <= to; i++ {
		if resources == nil || resources[j.changes[i].Resource] {
			out = append(out, j.changes[i])
		}
	}
	return out
}

// stableName is the name of resource namespace/name as runs compare it: a generated name
// as its prefix and "*" (the suffix is random, whatever the seed).
func (j *journal) stableName(resource, namespace, name string) string {
	for _, v := range j.versions[objKey{resource, namespace, name}] {
		if v.raw == nil {
			continue
		}
		var m struct {
			Metadata struct {
				GenerateName string `json:"generateName"`
			} `json:"metadata"`
		}
		if json.Unmarshal(v.raw, &m) == nil && m.Metadata.GenerateName != "" && strings.HasPrefix(name, m.Metadata.GenerateName) {
			return m.Metadata.GenerateName + "*"
		}
		break
	}
	return name
}

func (j *journal) name(ref string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n, ok := j.names[ref]; ok {
		return n
	}
	n, err := j.srv.ResourceName(ref)
	if err != nil {
		n = ref
	}
	j.names[ref] = n
	return n
}

// State is the server's state right after one change, as an Invariant sees it. Its
// methods read a mirror of the store: they never call the server.
type State struct {
	j      *journal
	change apitest.Change
}

// Change is the change just committed.
func (s *State) Change() apitest.Change { return s.change }

// Get returns the object resource namespace/name ("" namespace for a cluster-scoped one).
func (s *State) Get(resource, namespace, name string) (apitest.Object, bool) {
	res := s.j.name(resource)
	raw, ok := s.j.cur[res][objKey{res, namespace, name}]
	if !ok {
		return nil, false
	}
	return decodeObject(raw), true
}

// List returns the objects of resource in namespace ("" for every namespace), in
// namespace and name order.
func (s *State) List(resource, namespace string) []apitest.Object {
	res := s.j.name(resource)
	var keys []objKey
	for k := range s.j.cur[res] {
		if namespace == "" || k.namespace == namespace {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].namespace != keys[b].namespace {
			return keys[a].namespace < keys[b].namespace
		}
		return keys[a].name < keys[b].name
	})
	out := make([]apitest.Object, len(keys))
	for i, k := range keys {
		out[i] = decodeObject(s.j.cur[res][k])
	}
	return out
}

// Get returns the object resource namespace/name of s decoded into a T (a pointer to your
// struct), and false if it does not exist.
func Get[T any](s *State, resource, namespace, name string) (T, bool) {
	var out T
	o, ok := s.Get(resource, namespace, name)
	if !ok || o.Into(&out) != nil {
		return out, false
	}
	return out, true
}

// List returns the objects of resource in namespace ("" for all) of s decoded into Ts, in
// namespace and name order (objects that do not decode are left out).
func List[T any](s *State, resource, namespace string) []T {
	var out []T
	for _, o := range s.List(resource, namespace) {
		var v T
		if o.Into(&v) == nil {
			out = append(out, v)
		}
	}
	return out
}

func decodeObject(raw json.RawMessage) apitest.Object {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	d.Decode(&m)
	return apitest.Object(m)
}

func uintString(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}
