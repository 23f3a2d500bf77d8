package fleetcopy

import (
	"context"
	"maps"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

const (
	// LabelCopy, "true" on a hub ConfigMap, asks for its copy in every cluster.
	LabelCopy = "fleetcopy.informerkit.dev/copy"
	// LabelManaged, "true" on a cluster's ConfigMap, marks it as a copy this controller
	// keeps (and deletes when its source goes).
	LabelManaged = "fleetcopy.informerkit.dev/managed"
)

// ConfigMap declares the fields the controller reads and writes.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	// Data is what is copied.
	Data map[string]string `json:"data,omitempty"`
}

var _ = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

// Options configure the controller.
type Options struct {
	// Namespace limits the sources to one namespace of the hub (default: all).
	Namespace string
	// Fleet are the options of the Fleet Setup creates.
	Fleet multicluster.Options
	// Controller are the options of the controller.
	Controller multicluster.ControllerOptions
}

// Setup adds to mgr (the hub's Manager) a Fleet of the clusters provider reports and the
// fleetcopy controller over it, and returns the controller.
func Setup(mgr *controller.Manager, provider multicluster.Provider, opts Options) (*multicluster.Controller, error) {
	fleet, err := multicluster.New(mgr, provider, opts.Fleet)
	if err != nil {
		return nil, err
	}
	sources := controller.InformerOptions{Namespace: opts.Namespace, LabelSelector: labels.SelectorFromSet(map[string]string{LabelCopy: "true"})}
	hub, err := controller.InformerForWithOptions[*ConfigMap](mgr, sources)
	if err != nil {
		return nil, err
	}
	c, err := multicluster.NewController(fleet, "fleetcopy", &reconciler{sources: hub}, opts.Controller)
	if err != nil {
		return nil, err
	}
	if err := multicluster.WatchHubWithOptions(c, controller.EnqueueRequestForObject[*ConfigMap](),
		multicluster.WatchOptions[*ConfigMap]{Informer: sources}); err != nil {
		return nil, err
	}
	copies := controller.InformerOptions{Namespace: opts.Namespace, LabelSelector: labels.SelectorFromSet(map[string]string{LabelManaged: "true"})}
	if err := multicluster.WatchWithOptions(c, controller.EnqueueRequestForObject[*ConfigMap](),
		multicluster.WatchOptions[*ConfigMap]{Informer: copies}); err != nil {
		return nil, err
	}
	return c, nil
}

// reconciler makes one cluster's copy of one source what the source says.
type reconciler struct {
	sources *informer.Informer[*ConfigMap] // the hub's labelled ConfigMaps
}

// Reconcile writes or deletes the copy of req's source in req's cluster. The copy is read
// live, not from a cache of every ConfigMap of the cluster (which the controller would hold
// for each cluster): one GET per Request, and a write only when the copy differs.
func (r *reconciler) Reconcile(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
	src, ok, err := r.sources.GetStore().GetByKey(req.Namespace + "/" + req.Name)
	if err != nil {
		return controller.Result{}, err
	}
	copies := apiclient.NewResource[*ConfigMap](cl.APIClient(), kinds.ConfigMap.GroupVersionResource()).Namespace(req.Namespace)
	cur, err := copies.Get(ctx, req.Name, apiclient.GetOptions{})
	found := err == nil
	if err != nil && !meta.IsNotFound(err) {
		return controller.Result{}, err
	}
	switch {
	case !ok && (!found || cur.Labels[LabelManaged] != "true"):
		return controller.Result{}, nil // no source, and no copy of ours
	case !ok:
		// The source was deleted or unlabelled: delete its copy.
		err := copies.Delete(ctx, req.Name, apiclient.DeleteOptions{})
		if meta.IsNotFound(err) {
			err = nil
		}
		return controller.Result{}, err
	case !found:
		cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name,
			Labels: map[string]string{LabelManaged: "true"}}, Data: maps.Clone(src.Data)}
		_, err := copies.Create(ctx, cm, apiclient.CreateOptions{})
		return controller.Result{}, err // AlreadyExists: a copy made meanwhile, read next time
	case cur.Labels[LabelManaged] == "true" && maps.Equal(cur.Data, src.Data):
		return controller.Result{}, nil
	}
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels[LabelManaged] = "true"
	cur.Data = maps.Clone(src.Data)
	_, err = copies.Update(ctx, cur, apiclient.UpdateOptions{}) // a Conflict is retried
	return controller.Result{}, err
}
