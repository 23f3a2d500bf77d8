package apitest

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/celrules"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/apitest/internal/ssa"
)

// storedObj is one object version. It is immutable once stored: lists and watch events
// share it, and raw already carries metadata.resourceVersion == rv.
type storedObj struct {
	key        string // "namespace/name", or "name" when cluster-scoped
	namespace  string
	name       string
	uid        string
	rv         uint64
	labels     map[string]string
	deleting   bool // metadata.deletionTimestamp is set
	finalizers int
	raw        []byte
	// cache holds other encodings of raw, made on first use (negotiate.go).
	cache storedCache
}

// event is one change of a resource, kept in the resource's bounded history.
type event struct {
	typ  apiclient.EventType
	rv   uint64
	obj  *storedObj // the new state; for Deleted the last state with the deletion's RV
	prev *storedObj // the state before (nil for Added)
	// frame is the chunked-stream frame {"type":..,"object":..}\n, shared by all watchers.
	frame []byte
}

// resource holds the objects and history of one resource type.
type resource struct {
	typ ResourceType
	// builtinOnce computes isBuiltin: the kind has a protobuf schema (negotiate.go).
	builtinOnce sync.Once
	isBuiltin   bool
	// mergeOnce computes merge, the merge engines' schema; managers are the field managers
	// of the resource and its status (managedfields.go; s.mu guards them).
	mergeOnce sync.Once
	merge     mergeschema.Type
	managers  map[string]*ssa.FieldManager
	// celOnce compiles cel, the rules of a custom resource's schema (celrules.go).
	celOnce sync.Once
	cel     *celrules.Validator

	objects map[string]*storedObj
	sorted  []string // sorted keys; nil when objects changed set

	// history: events[i] has sequence number base+i.
	events  []*event
	base    uint64
	maxHist int
	// evictedRV is the RV of the newest event dropped from history; compactedRV the RV of
	// the last Compact. Watches and snapshot reads need RV >= max(evictedRV, compactedRV).
	evictedRV   uint64
	compactedRV uint64
	// progressRV is the RV of the latest event (or of the registration): what the
	// kube-apiserver's watch cache would put in a bookmark.
	progressRV uint64
	// notify is closed (and replaced) when an event is appended.
	notify chan struct{}

	// The last snapshot: the objects at snapRV.
	snapRV   uint64
	snapObjs []*storedObj

	// Served for a CustomResourceDefinition (crdserve.go): crd is its name ("" for other
	// resources) and crdSpec its spec as last served; served lists the versions requests
	// may name (nil: typ.Version only). terminating: the CRD is being deleted (creates are
	// refused); removed: the resource is no longer served.
	crd         string
	crdSpec     []byte
	served      []string
	terminating bool
	removed     bool
}

func newResource(t ResourceType, maxHist int, rv uint64) *resource {
	return &resource{
		typ:         t,
		served:      t.versions,
		objects:     map[string]*storedObj{},
		maxHist:     maxHist,
		compactedRV: rv,
		progressRV:  rv,
		notify:      make(chan struct{}),
	}
}

// oldestRV is the smallest RV from which the history can replay every later event.
func (r *resource) oldestRV() uint64 {
	return max(r.evictedRV, r.compactedRV)
}

// end is the sequence number of the next event.
func (r *resource) end() uint64 { return r.base + uint64(len(r.events)) }

func (r *resource) append(ev *event) {
	r.progressRV = ev.rv
	r.events = append(r.events, ev)
	for len(r.events) > r.maxHist {
		r.evictedRV = r.events[0].rv
		r.events[0] = nil
		r.events = r.events[1:]
		r.base++
	}
	close(r.notify)
	r.notify = make(chan struct{})
}

// seqAfter returns the sequence number of the first event with an RV greater than rv.
func (r *resource) seqAfter(rv uint64) uint64 {
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].rv > rv })
	return r.base + uint64(i)
}

func (r *resource) sortedKeys() []string {
	if r.sorted == nil {
		keys := make([]string, 0, len(r.objects))
		for k := range r.objects {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r.sorted = keys
	}
	return r.sorted
}

// snapshot returns the sorted objects as they were at rv (rv must be >= oldestRV and <= the
// current RV). With no event after rv it is the current state. The state at an RV never
// changes, so the last snapshot is cached: the pages of a paged list share one. The
// returned slice must not be modified.
func (r *resource) snapshot(rv uint64) []*storedObj {
	if r.snapObjs != nil && r.snapRV == rv {
		return r.snapObjs
	}
	objs := r.buildSnapshot(rv)
	r.snapRV, r.snapObjs = rv, objs
	return objs
}

func (r *resource) buildSnapshot(rv uint64) []*storedObj {
	keys := r.sortedKeys()
	first := r.seqAfter(rv)
	if first == r.end() {
		out := make([]*storedObj, len(keys))
		for i, k := range keys {
			out[i] = r.objects[k]
		}
		return out
	}
	// Undo the events after rv, newest first, so each key ends at its state at rv.
	past := map[string]*storedObj{}
	for i := len(r.events) - 1; i >= int(first-r.base); i-- {
		ev := r.events[i]
		past[ev.obj.key] = ev.prev
	}
	out := make([]*storedObj, 0, len(keys)+len(past))
	for _, k := range keys {
		if o, changed := past[k]; changed {
			if o != nil {
				out = append(out, o)
			}
			continue
		}
		out = append(out, r.objects[k])
	}
	for k, o := range past {
		if o != nil {
			if _, live := r.objects[k]; !live {
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// frameFor encodes a chunked watch frame.
func frameFor(typ apiclient.EventType, raw []byte) []byte {
	b := make([]byte, 0, len(raw)+32)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = append(b, raw...)
	b = append(b, "}\n"...)
	return b
}

func mustDecode(b []byte) map[string]any {
	m, err := jsonobj.Decode(b)
	if err != nil {
		panic("apitest: stored object does not decode: " + err.Error())
	}
	return m
}

// newStored encodes obj and extracts the fields the server indexes.
func newStored(obj map[string]any, rv uint64) (*storedObj, error) {
	meta := jsonobj.Meta(obj)
	meta["resourceVersion"] = strconv.FormatUint(rv, 10)
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	o := &storedObj{
		namespace: jsonobj.Str(meta, "namespace"),
		name:      jsonobj.Str(meta, "name"),
		uid:       jsonobj.Str(meta, "uid"),
		rv:        rv,
		raw:       raw,
	}
	o.key = objectKey(o.namespace, o.name)
	if l, ok := meta["labels"].(map[string]any); ok && len(l) > 0 {
		o.labels = make(map[string]string, len(l))
		for k, v := range l {
			s, _ := v.(string)
			o.labels[k] = s
		}
	}
	if f, ok := meta["finalizers"].([]any); ok {
		o.finalizers = len(f)
	}
	if meta["deletionTimestamp"] != nil {
		o.deleting = true
	}
	return o, nil
}

// withRV returns a copy of o's JSON with another resourceVersion (for DELETED events of
// objects that stop matching a selector, which carry the previous state and the new RV).
func (o *storedObj) withRV(rv uint64) []byte {
	m := mustDecode(o.raw)
	jsonobj.Meta(m)["resourceVersion"] = strconv.FormatUint(rv, 10)
	b, _ := json.Marshal(m)
	return b
}
