package configmapreplicator

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
)

// Index names of the informers' caches.
const (
	// indexBySource indexes ConfigMapReplications by "namespace/name" of their source.
	indexBySource = "bySource"
	// indexByReplication indexes ConfigMaps by their LabelReplication value (copies only).
	indexByReplication = "byReplication"
)

// Options configure the controller.
type Options struct {
	// Name of the controller (default "configmap-replicator").
	Name string
	// MaxConcurrentReconciles (default 2).
	MaxConcurrentReconciles int
	// Logger (default the manager's).
	Logger *slog.Logger
	// Trace, if set, receives one line per step an event takes through the machinery: the
	// DeltaFIFO, the informer's handler, the work queue, the reconcile and its writes. stage
	// names the step. The demo prints it.
	Trace func(stage, msg string)
	// Relevant, if set, limits tracing to the objects for which it returns true (namespace,
	// name); the demo uses it to ignore the rest of a real cluster.
	Relevant func(namespace, name string) bool
}

// Replicator is the reconciler: it keeps the copies of each ConfigMapReplication's source in
// the selected namespaces, and records the result in the replication's status.
type Replicator struct {
	replications *apiclient.Resource[*ConfigMapReplication]
	configMaps   *apiclient.Resource[*ConfigMap]

	replInf *informer.Informer[*ConfigMapReplication]
	cmInf   *informer.Informer[*ConfigMap]
	nsInf   *informer.Informer[*Namespace]

	log *slog.Logger

	// written remembers the last status this controller wrote to each replication, with the
	// resourceVersion the write produced (see statusUpToDate).
	mu      sync.Mutex
	written map[string]writtenStatus
}

type writtenStatus struct {
	resourceVersion string
	status          ReplicationStatus
}

// Setup creates the controller and its informers on mgr and adds it to mgr: three shared
// informers (ConfigMapReplications, ConfigMaps, Namespaces) and four event sources:
//
//   - a ConfigMapReplication changed (spec only: GenerationChanged) → reconcile it;
//   - a copy changed or was deleted by someone else → reconcile its owner
//     (EnqueueRequestForOwner, controller references only, cluster-scoped owner);
//   - a source ConfigMap changed → reconcile the replications that copy it (a map function
//     over an index of replications by source);
//   - a namespace appeared, went, or changed labels → reconcile every replication.
func Setup(mgr *controller.Manager, opts Options) (*controller.Controller, error) {
	if opts.Name == "" {
		opts.Name = "configmap-replicator"
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 2
	}
	if opts.Logger == nil {
		opts.Logger = mgr.Logger()
	}
	client := mgr.APIClient()
	r := &Replicator{
		replications: apiclient.NewResource[*ConfigMapReplication](client, ReplicationGVR),
		configMaps:   apiclient.NewResource[*ConfigMap](client, ConfigMapGVR),
		replInf:      controller.For[*ConfigMapReplication](mgr, ReplicationGVR),
		cmInf:        controller.For[*ConfigMap](mgr, ConfigMapGVR),
		nsInf:        controller.For[*Namespace](mgr, NamespaceGVR),
		log:          opts.Logger.With("controller", opts.Name),
		written:      map[string]writtenStatus{},
	}
	if err := r.replInf.AddIndexers(indexer.Indexers[*ConfigMapReplication]{indexBySource: func(o *ConfigMapReplication) ([]string, error) {
		return []string{o.Spec.Source.String()}, nil
	}}); err != nil {
		return nil, err
	}
	if err := r.cmInf.AddIndexers(indexer.Indexers[*ConfigMap]{indexByReplication: func(o *ConfigMap) ([]string, error) {
		if v, ok := o.Labels[LabelReplication]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	tr := newTracer(opts.Trace, opts.Relevant)
	if tr != nil {
		traceFIFO(tr, r.replInf, "configmapreplications")
		traceFIFO(tr, r.cmInf, "configmaps")
		traceFIFO(tr, r.nsInf, "namespaces")
	}

	c, err := controller.New(opts.Name, traced(tr, r), controller.Options{
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		Logger:                  opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	sources := []controller.Source{
		controller.Kind(r.replInf,
			traceHandler(tr, "ConfigMapReplication", "primary", controller.EnqueueRequestForObject[*ConfigMapReplication]()),
			tracePredicate(tr, "ConfigMapReplication", "GenerationChanged", controller.GenerationChanged[*ConfigMapReplication]())),
		controller.Kind(r.cmInf,
			traceHandler(tr, "ConfigMap", "copy → owner", controller.EnqueueRequestForOwner[*ConfigMap](Group, Kind,
				controller.OwnerOptions{OnlyController: true, ClusterScoped: true})),
			controller.ResourceVersionChanged[*ConfigMap]()),
		controller.Kind(r.cmInf,
			traceHandler(tr, "ConfigMap", "source → its replications", controller.EnqueueRequestsFromMapFunc(r.replicationsOfSource)),
			controller.ResourceVersionChanged[*ConfigMap]()),
		controller.Kind(r.nsInf,
			traceHandler(tr, "Namespace", "→ every replication", controller.EnqueueRequestsFromMapFunc(r.allReplications)),
			tracePredicate(tr, "Namespace", "LabelsChanged", controller.LabelsChanged[*Namespace]())),
	}
	for _, s := range sources {
		if err := c.Watch(s); err != nil {
			return nil, err
		}
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// replicationsOfSource maps a ConfigMap to the replications whose source it is.
func (r *Replicator) replicationsOfSource(_ context.Context, cm *ConfigMap) []controller.Request {
	var out []controller.Request
	_ = r.replInf.GetIndexer().RangeByIndex(indexBySource, cm.Namespace+"/"+cm.Name, func(_ string, repl *ConfigMapReplication) bool {
		out = append(out, controller.Request{Name: repl.Name})
		return true
	})
	return out
}

// allReplications maps a namespace to every replication: any of them may select it now or
// may have selected it before.
func (r *Replicator) allReplications(context.Context, *Namespace) []controller.Request {
	var out []controller.Request
	for _, repl := range r.replInf.Lister().List(labels.Everything()) {
		out = append(out, controller.Request{Name: repl.Name})
	}
	return out
}

// Reconcile makes the copies of one replication match its source and selector, from the
// informers' caches, and writes the status.
func (r *Replicator) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	var actions []string
	defer func() { report(ctx, actions) }()

	repl, err := r.replInf.Lister().Get("", req.Name)
	if apiclient.IsNotFound(err) {
		r.mu.Lock()
		delete(r.written, req.Name)
		r.mu.Unlock()
		// Gone: delete its copies. (On a real cluster the garbage collector would too, since
		// the copies name it as their owner; apitest has no garbage collector.)
		for _, cm := range r.copies(req.Name) {
			if err := r.deleteCopy(ctx, cm); err != nil {
				return controller.Result{}, err
			}
			actions = append(actions, "delete "+key(cm.Namespace, cm.Name)+" (replication gone)")
		}
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}

	// Desired: a copy in every selected namespace, if the source exists.
	src, err := r.cmInf.Lister().Get(repl.Spec.Source.Namespace, repl.Spec.Source.Name)
	sourceMissing := apiclient.IsNotFound(err)
	if err != nil && !sourceMissing {
		return controller.Result{}, err
	}
	want := map[string]bool{}
	if !sourceMissing {
		sel := labels.SelectorFromSet(repl.Spec.NamespaceSelector.MatchLabels)
		for _, ns := range r.nsInf.Lister().List(sel) {
			if ns.Name == src.Namespace || ns.DeletionTimestamp != nil || ns.Status.Phase == "Terminating" {
				continue
			}
			want[ns.Name] = true
		}
	}

	// Keep one up-to-date candidate per wanted namespace; delete the rest.
	existing := map[string]*ConfigMap{}
	var problems []string
	var have []string
	requeue := false
	for _, cm := range r.copies(repl.Name) {
		if want[cm.Namespace] && cm.Name == repl.Spec.Source.Name && existing[cm.Namespace] == nil {
			existing[cm.Namespace] = cm
			continue
		}
		if err := r.deleteCopy(ctx, cm); err != nil {
			return controller.Result{}, err
		}
		why := "namespace not selected"
		if sourceMissing {
			why = "source gone"
		}
		actions = append(actions, fmt.Sprintf("delete %s (%s)", key(cm.Namespace, cm.Name), why))
	}
	// Create or update the wanted ones.
	for _, ns := range slices.Sorted(maps.Keys(want)) {
		desired := r.copyOf(repl, src, ns)
		cur, ok := existing[ns]
		switch {
		case !ok:
			// Not ours in the cache: is there a foreign ConfigMap with that name?
			if other, err := r.cmInf.Lister().Get(ns, desired.Name); err == nil && !ownedBy(other, repl) {
				problems = append(problems, fmt.Sprintf("%s exists and is not managed by %s", key(ns, desired.Name), repl.Name))
				continue
			}
			_, err := r.configMaps.Namespace(ns).Create(ctx, desired, apiclient.CreateOptions{FieldManager: "configmap-replicator"})
			if apiclient.IsAlreadyExists(err) {
				requeue = true // the cache has not seen it yet
				continue
			}
			if err != nil {
				return controller.Result{}, fmt.Errorf("creating %s: %w", key(ns, desired.Name), err)
			}
			actions = append(actions, "create "+key(ns, desired.Name))
		case !upToDate(cur, desired):
			desired.ResourceVersion = cur.ResourceVersion
			desired.UID = cur.UID
			if _, err := r.configMaps.Namespace(ns).Update(ctx, desired, apiclient.UpdateOptions{FieldManager: "configmap-replicator"}); err != nil {
				if apiclient.IsConflict(err) || apiclient.IsNotFound(err) {
					requeue = true
					continue
				}
				return controller.Result{}, fmt.Errorf("updating %s: %w", key(ns, desired.Name), err)
			}
			actions = append(actions, "update "+key(ns, desired.Name))
		}
		have = append(have, ns)
	}

	if requeue {
		// Some writes found the cache behind: do not record a passing undercount, look again.
		return controller.Result{Requeue: true}, nil
	}

	// Status.
	status := ReplicationStatus{ObservedGeneration: repl.Generation, Copies: len(have), Namespaces: have}
	switch {
	case sourceMissing:
		status.Message = fmt.Sprintf("source ConfigMap %s not found", repl.Spec.Source)
	case len(problems) > 0:
		status.Message = strings.Join(problems, "; ")
	}
	if !r.statusUpToDate(repl, status) {
		next := *repl
		next.Status = status
		out, err := r.replications.UpdateStatus(ctx, &next, apiclient.UpdateOptions{FieldManager: "configmap-replicator"})
		if err != nil {
			if apiclient.IsConflict(err) {
				return controller.Result{Requeue: true}, nil // the cache was behind: look again
			}
			if apiclient.IsNotFound(err) {
				return controller.Result{}, nil
			}
			return controller.Result{}, fmt.Errorf("writing the status of %s: %w", repl.Name, err)
		}
		r.mu.Lock()
		r.written[repl.Name] = writtenStatus{resourceVersion: out.ResourceVersion, status: status}
		r.mu.Unlock()
		actions = append(actions, fmt.Sprintf("status copies=%d%s", status.Copies, messageSuffix(status.Message)))
	}
	return controller.Result{Requeue: requeue}, nil
}

// statusUpToDate reports whether the status need not be written. The cache may lag behind
// the controller's own last status write, and status-only updates do not wake the controller
// (GenerationChanged), so a stale cached status that happens to equal the desired one must
// not be trusted alone: until the cache has caught up with the last write (same
// resourceVersion), that write must equal the desired status too. Otherwise the controller
// writes, gets a conflict if the cache was behind, and looks again.
func (r *Replicator) statusUpToDate(repl *ConfigMapReplication, want ReplicationStatus) bool {
	if !statusEqual(repl.Status, want) {
		return false
	}
	r.mu.Lock()
	last, ok := r.written[repl.Name]
	r.mu.Unlock()
	return !ok || last.resourceVersion == repl.ResourceVersion || statusEqual(last.status, want)
}

func messageSuffix(m string) string {
	if m == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", m)
}

// copies returns the cached ConfigMaps labelled as copies of the replication name.
func (r *Replicator) copies(name string) []*ConfigMap {
	out, _ := r.cmInf.GetIndexer().ByIndex(indexByReplication, name)
	return out
}

// deleteCopy deletes cm, only if it is still the object the cache holds (UID precondition).
func (r *Replicator) deleteCopy(ctx context.Context, cm *ConfigMap) error {
	uid := cm.UID
	err := r.configMaps.Namespace(cm.Namespace).Delete(ctx, cm.Name, apiclient.DeleteOptions{
		Preconditions: &apiclient.Preconditions{UID: &uid},
	})
	if err != nil && !apiclient.IsNotFound(err) && !apiclient.IsConflict(err) {
		return fmt.Errorf("deleting %s: %w", key(cm.Namespace, cm.Name), err)
	}
	return nil
}

// copyOf is the desired copy of src in namespace ns.
func (r *Replicator) copyOf(repl *ConfigMapReplication, src *ConfigMap, ns string) *ConfigMap {
	yes := true
	return &ConfigMap{
		TypeMeta: apiclient.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: apiclient.ObjectMeta{
			Namespace:   ns,
			Name:        src.Name,
			Labels:      map[string]string{LabelReplication: repl.Name},
			Annotations: map[string]string{AnnotationSource: key(src.Namespace, src.Name)},
			OwnerReferences: []apiclient.OwnerReference{{
				APIVersion: Group + "/" + Version, Kind: Kind, Name: repl.Name, UID: repl.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Data:       src.Data,
		BinaryData: src.BinaryData,
	}
}

func ownedBy(cm *ConfigMap, repl *ConfigMapReplication) bool {
	for _, ref := range cm.OwnerReferences {
		if ref.IsController() && ref.UID == repl.UID {
			return true
		}
	}
	return false
}

// upToDate compares what the controller manages: data, its label, annotation and owner.
func upToDate(cur, want *ConfigMap) bool {
	return maps.Equal(cur.Data, want.Data) && mapsEqualBytes(cur.BinaryData, want.BinaryData) &&
		cur.Labels[LabelReplication] == want.Labels[LabelReplication] &&
		cur.Annotations[AnnotationSource] == want.Annotations[AnnotationSource] &&
		len(cur.OwnerReferences) == 1 && cur.OwnerReferences[0].UID == want.OwnerReferences[0].UID &&
		cur.OwnerReferences[0].IsController()
}

func mapsEqualBytes(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

func statusEqual(a, b ReplicationStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Copies == b.Copies &&
		slices.Equal(a.Namespaces, b.Namespaces) && a.Message == b.Message
}

func key(ns, name string) string { return ns + "/" + name }
