// Package fleetcopy is the worked example of package controller/multicluster: a controller
// that keeps a copy of some of the hub's ConfigMaps in every cluster of a fleet. A hub
// ConfigMap labelled fleetcopy.informerkit.dev/copy=true is copied, under the same
// namespace and name, to each cluster the Provider reports, with the label
// fleetcopy.informerkit.dev/managed=true; a change of the source changes every copy, a copy
// changed or deleted in a cluster is put back, a source deleted or unlabelled has its copies
// deleted, and a cluster that joins the fleet gets every copy.
//
// It shows the shape of a multi-cluster controller:
//
//   - WatchHub on the sources: each hub event is a Request of every cluster, and a cluster
//     engaged later gets the Requests of every source the hub's cache holds;
//   - Watch on the copies (a label selector: only the managed ConfigMaps are cached in the
//     clusters): a copy changed in a cluster is a Request of that cluster only;
//   - a level-triggered Reconcile that reads the source from the hub's cache and writes the
//     copy with the client of the cluster the Request names.
//
// Setup wires it into a hub Manager. The namespaces of the sources must exist in the
// clusters (a copy into a missing namespace fails, and is retried with that cluster's
// backoff, delaying no other cluster).
package fleetcopy
