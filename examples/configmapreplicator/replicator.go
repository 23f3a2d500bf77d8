package configmapreplicator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
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
// the selected namespaces, and records the result in the replication's status and events.
type Replicator struct {
	replications *client.Typed[*ConfigMapReplication]
	configMaps   *client.Typed[*ConfigMap]
	namespaces   *client.Typed[*Namespace]
	events       controller.EventRecorder

	// The informers, for the event sources and their map functions.
	replInf *informer.Informer[*ConfigMapReplication]
	cmInf   *informer.Informer[*ConfigMap]
	nsInf   *informer.Informer[*Namespace]
}

// Setup creates the controller and its informers on mgr with controller.NewBuilder and adds
// it to mgr: three shared informers (ConfigMapReplications, ConfigMaps, Namespaces) and four
// event sources:
//
//   - a ConfigMapReplication changed (spec only: GenerationChanged) → reconcile it (For);
//   - a copy changed or was deleted by someone else → reconcile its controller owner (Owns:
//     the owner's kind and cluster scope come from the type registry);
//   - a source ConfigMap changed → reconcile the replications that copy it (Watches, a map
//     function over an index of replications by source);
//   - a namespace appeared, went, or changed labels → reconcile every replication (Watches).
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
	c := mgr.Client()
	r := &Replicator{
		replications: client.TypedFor[*ConfigMapReplication](c),
		configMaps:   client.TypedFor[*ConfigMap](c),
		namespaces:   client.TypedFor[*Namespace](c),
		events:       mgr.EventRecorderFor(opts.Name),
	}
	var err error
	if r.replInf, err = controller.InformerFor[*ConfigMapReplication](mgr); err != nil {
		return nil, err
	}
	if r.cmInf, err = controller.InformerFor[*ConfigMap](mgr); err != nil {
		return nil, err
	}
	if r.nsInf, err = controller.InformerFor[*Namespace](mgr); err != nil {
		return nil, err
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

	ctl, err := controller.NewBuilder(mgr, opts.Name).
		For(controller.PrimaryWithOptions(controller.PrimaryOptions[*ConfigMapReplication]{
			Predicates:  []controller.Predicate[*ConfigMapReplication]{tracePredicate(tr, "ConfigMapReplication", "GenerationChanged", controller.GenerationChanged[*ConfigMapReplication]())},
			WrapHandler: traceWrap[*ConfigMapReplication](tr, "ConfigMapReplication", "primary"),
		})).
		Owns(controller.OwnedWithOptions(controller.OwnedOptions[*ConfigMap]{
			WrapHandler: traceWrap[*ConfigMap](tr, "ConfigMap", "copy → owner"),
		})).
		Watches(controller.Watched(traceHandler(tr, "ConfigMap", "source → its replications", controller.EnqueueRequestsFromMapFunc(r.replicationsOfSource)))).
		Watches(controller.Watched(traceHandler(tr, "Namespace", "→ every replication", controller.EnqueueRequestsFromMapFunc(r.allReplications)),
			tracePredicate(tr, "Namespace", "LabelsChanged", controller.LabelsChanged[*Namespace]()))).
		WithEventFilter(controller.ResourceVersionChanged[meta.Object]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: opts.Logger}).
		Build(traced(tr, r))
	if err != nil {
		return nil, err
	}
	return ctl, nil
}

// replicationsOfSource maps a ConfigMap to the replications whose source it is.
func (r *Replicator) replicationsOfSource(_ context.Context, cm *ConfigMap) []controller.Request {
	var out []controller.Request
	_ = r.replInf.GetIndexer().RangeByIndex(indexBySource, key(cm.Namespace, cm.Name), func(_ string, repl *ConfigMapReplication) bool {
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

// errForeign: a ConfigMap with the copy's name exists and another controller (or a person)
// manages it.
var errForeign = errors.New("exists and is not managed by the replication")

// Reconcile makes the copies of one replication match its source and selector and writes the
// status. Reads go through the client: they come from the caches, and see this controller's
// own earlier writes (so a stale status or a missing fresh copy is never acted on). Before it
// creates, changes or deletes a copy it reads the replication from the server once
// (liveCheck): a cache behind the server writes nothing.
func (r *Replicator) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	var actions []string
	defer func() { report(ctx, actions) }()

	repl, err := r.replications.Get(ctx, "", req.Name, client.GetOptions{})
	if meta.IsNotFound(err) {
		// Gone: delete its copies. (On a real cluster the garbage collector would too, since
		// the copies name it as their owner; apitest has no garbage collector.)
		actions, err = r.deleteCopies(ctx, req.Name)
		return controller.Result{}, err
	}
	if err != nil {
		return controller.Result{}, err
	}
	if err := repl.Spec.NamespaceSelector.Validate("spec.namespaceSelector"); err != nil {
		// A wrong spec: the copies stay as they are and the status says why. Retrying would
		// not help; a change of the spec reconciles again.
		actions, err = r.writeStatus(ctx, repl, repl.Status.Namespaces, nil, false, err)
		return controller.Result{}, err
	}
	src, want, err := r.desired(ctx, repl)
	if err != nil {
		return controller.Result{}, err
	}
	lc := &liveCheck{r: r, repl: repl}
	actions, err = r.pruneCopies(ctx, lc, want, src == nil)
	if err != nil {
		return staleOr(lc, err)
	}
	have, problems, written, err := r.writeCopies(ctx, lc, src, want)
	actions = append(actions, written...)
	if err != nil {
		return staleOr(lc, err)
	}
	status, err := r.writeStatus(ctx, repl, have, problems, src == nil, nil)
	actions = append(actions, status...)
	return controller.Result{}, err
}

// staleOr is the result of a reconcile that stopped on err: if the cached replication was
// behind the server (errStaleView), nothing more is written and it is reconciled again from
// the cache that now holds the server's (a deleted one by its DELETED event).
func staleOr(lc *liveCheck, err error) (controller.Result, error) {
	if errors.Is(err, errStaleView) {
		return controller.Result{Requeue: !lc.gone}, nil
	}
	return controller.Result{}, err
}

// deleteCopies deletes every copy of the replication name, which is gone.
func (r *Replicator) deleteCopies(ctx context.Context, name string) (actions []string, err error) {
	copies, err := r.copies(ctx, name)
	for _, cm := range copies {
		if err := r.deleteCopy(ctx, cm); err != nil {
			return actions, err
		}
		actions = append(actions, "delete "+key(cm.Namespace, cm.Name)+" (replication gone)")
	}
	return actions, err
}

// desired returns the source ConfigMap (nil if it does not exist) and the namespaces that
// should hold a copy: every selected namespace but the source's, if the source exists.
func (r *Replicator) desired(ctx context.Context, repl *ConfigMapReplication) (*ConfigMap, map[string]bool, error) {
	want := map[string]bool{}
	src, err := r.configMaps.Get(ctx, repl.Spec.Source.Namespace, repl.Spec.Source.Name, client.GetOptions{})
	if meta.IsNotFound(err) {
		return nil, want, nil
	}
	if err != nil {
		return nil, nil, err
	}
	sel, err := repl.Spec.NamespaceSelector.AsSelector() // validated by Reconcile
	if err != nil {
		return nil, nil, err
	}
	nss, err := r.namespaces.List(ctx, client.ListOptions{LabelSelector: sel, UnsafeDisableDeepCopy: true})
	if err != nil {
		return nil, nil, err
	}
	for _, ns := range nss {
		if ns.Name != src.Namespace && ns.DeletionTimestamp == nil && ns.Status.Phase != "Terminating" {
			want[ns.Name] = true
		}
	}
	return src, want, nil
}

// pruneCopies keeps one copy per wanted namespace and deletes the rest.
func (r *Replicator) pruneCopies(ctx context.Context, lc *liveCheck, want map[string]bool, sourceMissing bool) (actions []string, err error) {
	repl := lc.repl
	copies, err := r.copies(ctx, repl.Name)
	if err != nil {
		return nil, err
	}
	kept := map[string]bool{}
	for _, cm := range copies {
		if want[cm.Namespace] && cm.Name == repl.Spec.Source.Name && !kept[cm.Namespace] {
			kept[cm.Namespace] = true
			continue
		}
		if err := lc.confirm(ctx); err != nil {
			return actions, err
		}
		if err := r.deleteCopy(ctx, cm); err != nil {
			return actions, err
		}
		why := "namespace not selected"
		if sourceMissing {
			why = "source gone"
		}
		actions = append(actions, fmt.Sprintf("delete %s (%s)", key(cm.Namespace, cm.Name), why))
	}
	return actions, nil
}

// writeCopies creates or updates the copies in the wanted namespaces, in name order. have are
// the namespaces that hold a copy now; problems the ConfigMaps in the way that the
// replication does not manage.
func (r *Replicator) writeCopies(ctx context.Context, lc *liveCheck, src *ConfigMap, want map[string]bool) (have, problems, actions []string, err error) {
	repl := lc.repl
	for _, ns := range slices.Sorted(maps.Keys(want)) {
		k := key(ns, src.Name)
		switch result, err := r.writeCopy(ctx, lc, src, ns); {
		case errors.Is(err, errForeign):
			problems = append(problems, fmt.Sprintf("%s exists and is not managed by %s", k, repl.Name))
			r.events.Eventf(repl, controller.EventTypeWarning, "ForeignConfigMap", "%s exists and is not managed by %s", k, repl.Name)
			continue
		case err != nil:
			return have, problems, actions, fmt.Errorf("copying to %s: %w", k, err)
		case result == controllerutil.OperationResultCreated:
			actions = append(actions, "create "+k)
			r.events.Eventf(repl, controller.EventTypeNormal, "Copied", "created %s", k)
		case result != controllerutil.OperationResultNone:
			actions = append(actions, "update "+k)
			r.events.Eventf(repl, controller.EventTypeNormal, "Copied", "updated %s", k)
		}
		have = append(have, ns)
	}
	return have, problems, actions, nil
}

// writeStatus writes the replication's status, with a Ready condition, if it changed.
func (r *Replicator) writeStatus(ctx context.Context, repl *ConfigMapReplication, have, problems []string, sourceMissing bool, invalid error) (actions []string, err error) {
	next := repl.Status
	next.ObservedGeneration, next.Copies, next.Namespaces, next.Message = repl.Generation, len(have), have, ""
	ready := conditions.Condition{Type: "Ready", Status: conditions.True, Reason: "Replicated", ObservedGeneration: repl.Generation}
	switch {
	case invalid != nil:
		next.Message = invalid.Error()
		ready.Status, ready.Reason = conditions.False, "InvalidSpec"
	case sourceMissing:
		next.Message = fmt.Sprintf("source ConfigMap %s not found", repl.Spec.Source)
		ready.Status, ready.Reason = conditions.False, "SourceNotFound"
	case len(problems) > 0:
		next.Message = strings.Join(problems, "; ")
		ready.Status, ready.Reason = conditions.False, "ForeignConfigMaps"
	}
	ready.Message = next.Message
	changed := conditions.Set(&next.Conditions, ready)
	if !changed && statusEqual(repl.Status, next) {
		return nil, nil
	}
	repl.Status = next
	if _, err := r.replications.Status().Update(ctx, repl, client.UpdateOptions{FieldManager: "configmap-replicator"}); err != nil {
		if meta.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("writing the status of %s: %w", repl.Name, err)
	}
	return []string{fmt.Sprintf("status copies=%d%s", next.Copies, messageSuffix(next.Message))}, nil
}

// writeCopy creates or updates the copy of src in namespace ns: its data, its label and
// annotation, and its controller reference to repl. It refuses a ConfigMap repl does not
// control (errForeign), and writes nothing if lc finds the cached replication stale.
func (r *Replicator) writeCopy(ctx context.Context, lc *liveCheck, src *ConfigMap, ns string) (controllerutil.OperationResult, error) {
	repl := lc.repl
	cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: src.Name}}
	_, result, err := controllerutil.CreateOrUpdate(ctx, r.configMaps, cm, func(cm *ConfigMap) error {
		if cm.ResourceVersion != "" && !controllerutil.IsControlledBy(cm, repl) {
			return errForeign
		}
		if cm.ResourceVersion == "" || !upToDate(cm, repl, src) {
			if err := lc.confirm(ctx); err != nil {
				return err // nothing written
			}
		}
		cm.Labels = withEntry(cm.Labels, LabelReplication, repl.Name)
		cm.Annotations = withEntry(cm.Annotations, AnnotationSource, key(src.Namespace, src.Name))
		cm.Data, cm.BinaryData = src.Data, src.BinaryData
		return controllerutil.SetControllerReference(repl, cm)
	})
	return result, err
}

func withEntry(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// copies returns the ConfigMaps labelled as copies of the replication name (cached objects:
// read, never changed).
func (r *Replicator) copies(ctx context.Context, name string) ([]*ConfigMap, error) {
	return r.configMaps.List(ctx, client.ListOptions{Index: indexByReplication, IndexValue: name, UnsafeDisableDeepCopy: true})
}

// deleteCopy deletes cm, only if it is still the object the cache holds (uid precondition).
func (r *Replicator) deleteCopy(ctx context.Context, cm *ConfigMap) error {
	uid := cm.UID
	err := r.configMaps.Delete(ctx, cm, client.DeleteOptions{Preconditions: &client.Preconditions{UID: &uid}})
	if err != nil && !meta.IsNotFound(err) && !meta.IsConflict(err) {
		return fmt.Errorf("deleting %s: %w", key(cm.Namespace, cm.Name), err)
	}
	return nil
}

func messageSuffix(m string) string {
	if m == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", m)
}

func statusEqual(a, b ReplicationStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Copies == b.Copies &&
		slices.Equal(a.Namespaces, b.Namespaces) && a.Message == b.Message
}

func key(ns, name string) string { return ns + "/" + name }
