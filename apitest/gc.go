package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// The garbage collector of owner references, as kube-controller-manager's: a dependent
// whose owners are all gone is deleted (background), an owner deleted in the foreground
// waits for its blocking dependents, and an owner deleted with orphan propagation leaves
// its dependents behind, their references to it removed. The kube-apiserver's part (the
// orphan and foregroundDeletion finalizers a DELETE adds) is deleteFinalizers, in the
// delete path whether or not a collector runs, as on a cluster without one (envtest).

// The finalizers of garbage collection.
const (
	FinalizerOrphan             = "orphan"
	FinalizerForegroundDeletion = "foregroundDeletion"
)

// GCOptions configure the garbage collector (StartGarbageCollector).
type GCOptions struct {
	// Delay is how long the collector waits after a change before it acts, as
	// kube-controller-manager's lags behind its informers (default 0: at once). In a
	// testing/synctest bubble any delay lets everything else settle first.
	Delay time.Duration
}

// GarbageCollector deletes the dependents of deleted owners (see StartGarbageCollector).
type GarbageCollector struct {
	s       *Server
	opts    GCOptions
	stopped chan struct{}
	done    chan struct{}
	once    sync.Once
	// cache: the objects of the last plan, decoded (run's goroutine only).
	cache map[*storedObj]*gcNode
}

// StartGarbageCollector runs a garbage collector of owner references until Close (or
// GarbageCollector.Stop), as kube-controller-manager's does on a cluster:
//   - a dependent none of whose owners exists (by kind, name and uid, the owner looked up in
//     the dependent's namespace unless its kind is cluster-scoped) is deleted, with the
//     propagation its own finalizers ask for (background by default); a dependent that
//     still has an owner loses its references to the owners that are gone;
//   - an owner deleted with propagationPolicy Foreground (the kube-apiserver gives it the
//     foregroundDeletion finalizer) has its dependents deleted, and keeps that finalizer
//     until every dependent that blocks its deletion (blockOwnerDeletion: true) is gone;
//   - an owner deleted with Orphan (the orphan finalizer) has its references removed from
//     every dependent, then loses the finalizer.
//
// Owner kinds that no resource serves, and cluster-scoped dependents of namespaced kinds,
// are left alone, as unresolvable. Without a collector, dependents stay, as in envtest.
func (s *Server) StartGarbageCollector(opts GCOptions) (*GarbageCollector, error) {
	g := &GarbageCollector{s: s, opts: opts, stopped: make(chan struct{}), done: make(chan struct{})}
	if !s.track.addHandler() {
		return nil, errors.New("apitest: the server is closed")
	}
	go func() {
		defer s.track.doneHandler()
		defer close(g.done)
		g.run()
	}()
	return g, nil
}

// Stop stops the collector; Close stops it too.
func (g *GarbageCollector) Stop() {
	g.once.Do(func() { close(g.stopped) })
	<-g.done
}

func (g *GarbageCollector) run() {
	s := g.s
	var planned uint64
	for {
		changed := s.changedChan()
		s.mu.Lock()
		rv := s.rv
		s.mu.Unlock()
		if rv != planned {
			planned = rv
			if acts := g.plan(); len(acts) > 0 {
				for _, a := range acts {
					a()
				}
				continue
			}
		}
		select {
		case <-g.stopped:
			return
		case <-s.ctx.Done():
			return
		case <-changed:
		}
		if g.opts.Delay > 0 && !g.sleep() {
			return
		}
	}
}

func (g *GarbageCollector) sleep() bool {
	t := time.NewTimer(g.opts.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-g.stopped:
	case <-g.s.ctx.Done():
	}
	return false
}

// gcRef is an ownerReference.
type gcRef struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion"`
}

// gcNode is an object as the collector sees it.
type gcNode struct {
	res        *resource
	o          *storedObj
	refs       []gcRef
	finalizers []string
}

func (n *gcNode) has(fin string) bool { return slices.Contains(n.finalizers, fin) }

// node returns the collector's view of o, decoded once per stored version (and not at all
// for an object without owner references that is not being deleted).
func (g *GarbageCollector) node(r *resource, o *storedObj) *gcNode {
	if n := g.cache[o]; n != nil {
		return n
	}
	n := &gcNode{res: r, o: o}
	if o.deleting || bytes.Contains(o.raw, []byte(`"ownerReferences"`)) {
		md := jsonobj.Meta(mustDecode(o.raw))
		n.finalizers = jsonobj.Strings(md["finalizers"])
		if refs, ok := md["ownerReferences"]; ok {
			b, _ := json.Marshal(refs)
			json.Unmarshal(b, &n.refs)
		}
	}
	return n
}

// plan reads the store and returns the collector's actions, each one write.
func (g *GarbageCollector) plan() []func() {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	byUID := map[string]*gcNode{}
	var nodes []*gcNode
	dependents := map[string][]*gcNode{} // owner uid → dependents
	next := map[*storedObj]*gcNode{}
	defer func() { g.cache = next }()
	for _, r := range s.order {
		for _, k := range r.sortedKeys() {
			o := r.objects[k]
			n := g.node(r, o)
			next[o] = n
			byUID[o.uid] = n
			nodes = append(nodes, n)
			for _, ref := range n.refs {
				dependents[ref.UID] = append(dependents[ref.UID], n)
			}
		}
	}
	var acts []func()
	for _, n := range nodes {
		if len(n.refs) > 0 {
			if a := g.planDependent(n, byUID, dependents); a != nil {
				acts = append(acts, a)
			}
		}
		if n.o.deleting {
			acts = append(acts, g.planOwner(n, dependents[n.o.uid])...)
		}
	}
	return acts
}

// planDependent returns what to do with a dependent: remove its references to owners that
// are gone (or waiting for their dependents) when another owner remains, delete it when
// none does; nil for nothing.
func (g *GarbageCollector) planDependent(n *gcNode, byUID map[string]*gcNode, dependents map[string][]*gcNode) func() {
	var solid, gone, waiting []string
	for _, ref := range n.refs {
		owner, ok := g.owner(n, ref, byUID)
		switch {
		case !ok:
			return nil // unresolvable: left alone
		case owner == nil:
			gone = append(gone, ref.UID)
		case owner.o.deleting && owner.has(FinalizerForegroundDeletion):
			waiting = append(waiting, ref.UID)
		default:
			solid = append(solid, ref.UID)
		}
	}
	switch {
	case len(solid) > 0 && len(gone)+len(waiting) == 0:
		return nil
	case len(solid) > 0:
		return g.removeRefs(n, append(gone, waiting...))
	case n.o.deleting:
		return nil // on its way
	}
	policy := "Background"
	switch {
	case n.has(FinalizerOrphan):
		policy = "Orphan"
	case n.has(FinalizerForegroundDeletion), len(waiting) > 0 && len(dependents[n.o.uid]) > 0:
		policy = "Foreground"
	}
	res, ns, name, uid := n.res, n.o.namespace, n.o.name, n.o.uid
	return func() {
		s := g.s
		opts := deleteOptions{PropagationPolicy: &policy}
		opts.Preconditions = &struct {
			UID             *string `json:"uid"`
			ResourceVersion *string `json:"resourceVersion"`
		}{UID: &uid}
		s.mu.Lock()
		s.deleteLocked(res, ns, name, opts, false)
		s.mu.Unlock()
		s.notifyChange()
	}
}

// owner resolves ref for dependent n: the owner (nil if gone, or another object holds the
// name), and false if the reference cannot be resolved.
func (g *GarbageCollector) owner(n *gcNode, ref gcRef, byUID map[string]*gcNode) (*gcNode, bool) {
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	if !strings.Contains(ref.APIVersion, "/") {
		group = ""
	}
	var res *resource
	for _, r := range g.s.order {
		if r.typ.Kind == ref.Kind && r.typ.Group == group {
			res = r
			break
		}
	}
	if res == nil || res.typ.Namespaced && n.o.namespace == "" {
		return nil, false
	}
	ns := ""
	if res.typ.Namespaced {
		ns = n.o.namespace
	}
	o := res.objects[objectKey(ns, ref.Name)]
	if o == nil || o.uid != ref.UID {
		return nil, true
	}
	return byUID[o.uid], true
}

// planOwner returns what to do with an owner being deleted: with the orphan finalizer,
// remove its references from its dependents, then the finalizer; with foregroundDeletion,
// remove the finalizer once no dependent blocks it.
func (g *GarbageCollector) planOwner(n *gcNode, deps []*gcNode) []func() {
	uid := n.o.uid
	switch {
	case n.has(FinalizerOrphan):
		var acts []func()
		for _, d := range deps {
			acts = append(acts, g.removeRefs(d, []string{uid}))
		}
		if len(acts) > 0 {
			return acts
		}
		return []func(){g.removeFinalizer(n, FinalizerOrphan)}
	case n.has(FinalizerForegroundDeletion):
		for _, d := range deps {
			for _, ref := range d.refs {
				if ref.UID == uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
					return nil // a blocking dependent is still there
				}
			}
		}
		return []func(){g.removeFinalizer(n, FinalizerForegroundDeletion)}
	}
	return nil
}

// removeRefs removes the owner references to uids from n.
func (g *GarbageCollector) removeRefs(n *gcNode, uids []string) func() {
	return g.update(n, func(md map[string]any) {
		refs, _ := md["ownerReferences"].([]any)
		keep := refs[:0:0]
		for _, r := range refs {
			if !slices.Contains(uids, jsonobj.Str(jsonobj.Map(r), "uid")) {
				keep = append(keep, r)
			}
		}
		if len(keep) == 0 {
			delete(md, "ownerReferences")
		} else {
			md["ownerReferences"] = keep
		}
	})
}

func (g *GarbageCollector) removeFinalizer(n *gcNode, fin string) func() {
	return g.update(n, func(md map[string]any) {
		var keep []any
		for _, f := range jsonobj.Strings(md["finalizers"]) {
			if f != fin {
				keep = append(keep, f)
			}
		}
		if len(keep) == 0 {
			delete(md, "finalizers")
		} else {
			md["finalizers"] = keep
		}
	})
}

// update changes n's metadata with fn, if n is still the object the plan saw.
func (g *GarbageCollector) update(n *gcNode, fn func(md map[string]any)) func() {
	res, key, rv := n.res, n.o.key, n.o.rv
	return func() {
		s := g.s
		s.mu.Lock()
		cur := res.objects[key]
		if cur == nil || cur.rv != rv {
			s.mu.Unlock()
			return // changed since: the next plan sees it
		}
		obj := mustDecode(cur.raw)
		fn(jsonobj.Meta(obj))
		s.updateLocked(res, cur.namespace, cur.name, obj, updateMain, goWrite())
		s.mu.Unlock()
		s.notifyChange()
	}
}

// deleteFinalizers returns the finalizers a DELETE with opts leaves on an object that has
// fins, as the kube-apiserver's registry: Orphan adds orphan (and drops
// foregroundDeletion), Foreground the reverse, Background drops both; without a policy
// they stay as they are. It fails for an unknown policy.
func deleteFinalizers(fins []string, opts deleteOptions) ([]string, *meta.Status) {
	add, drop := "", []string{}
	switch {
	case opts.PropagationPolicy != nil && opts.OrphanDependents != nil:
		return nil, apierr.Invalid("DeleteOptions", "meta.k8s.io", "", []apierr.FieldError{
			apierr.InvalidValue("propagationPolicy", *opts.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set")})
	case opts.PropagationPolicy != nil:
		switch p := *opts.PropagationPolicy; p {
		case "Orphan":
			add, drop = FinalizerOrphan, []string{FinalizerForegroundDeletion}
		case "Foreground":
			add, drop = FinalizerForegroundDeletion, []string{FinalizerOrphan}
		case "Background":
			drop = []string{FinalizerOrphan, FinalizerForegroundDeletion}
		default:
			return nil, apierr.Invalid("DeleteOptions", "meta.k8s.io", "", []apierr.FieldError{
				apierr.NotSupportedValue("propagationPolicy", p, "Foreground", "Background", "Orphan", "nil")})
		}
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		add, drop = FinalizerOrphan, []string{FinalizerForegroundDeletion}
	case opts.OrphanDependents != nil:
		drop = []string{FinalizerOrphan}
	}
	var out []string
	for _, f := range fins {
		if !slices.Contains(drop, f) {
			out = append(out, f)
		}
	}
	if add != "" && !slices.Contains(out, add) {
		out = append(out, add)
	}
	return out, nil
}

// propagationLocked gives old the finalizers of garbage collection a DELETE with opts asks
// for (deleteFinalizers), and its deletionTimestamp: handled reports that it did (or that
// opts are invalid, or that a Background delete removed the collector's finalizers, the
// only ones, and deleted old). Otherwise the delete goes on as without them. Namespaces
// keep their own lifecycle.
func (s *Server) propagationLocked(r *resource, old *storedObj, opts deleteOptions) (o *storedObj, handled, deleted bool, st *meta.Status) {
	if r.typ.Group == "" && r.typ.Plural == "namespaces" {
		return nil, false, false, nil
	}
	obj := mustDecode(old.raw)
	md := jsonobj.Meta(obj)
	fins := jsonobj.Strings(md["finalizers"])
	next, st := deleteFinalizers(fins, opts)
	switch {
	case st != nil:
		return nil, true, false, st
	case slices.Equal(fins, next):
		return nil, false, false, nil
	case len(next) == 0:
		delete(md, "finalizers")
		o, err := s.commitLocked(r, apiclient.Deleted, obj, old)
		if err != nil {
			return nil, true, false, apierr.Internal(err.Error())
		}
		return o, true, true, nil
	}
	list := make([]any, len(next))
	for i, f := range next {
		list[i] = f
	}
	md["finalizers"] = list
	if md["deletionTimestamp"] == nil {
		md["deletionTimestamp"] = nowString()
		md["deletionGracePeriodSeconds"] = json.Number("0")
		if g := jsonobj.Num(md["generation"]); g > 0 {
			md["generation"] = json.Number(strconv.FormatInt(g+1, 10))
		}
	}
	o, err := s.commitLocked(r, apiclient.Modified, obj, old)
	if err != nil {
		return nil, true, false, apierr.Internal(err.Error())
	}
	return o, true, false, nil
}
