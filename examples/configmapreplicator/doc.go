// Package configmapreplicator is informerkit's example controller: it keeps a copy of a
// source ConfigMap in every namespace whose labels match a selector, as asked by a
// cluster-scoped custom resource, ConfigMapReplication:
//
//	apiVersion: informerkit.io/v1alpha1
//	kind: ConfigMapReplication
//	metadata: {name: team-settings}
//	spec:
//	  source: {namespace: platform, name: settings}
//	  namespaceSelector: {matchLabels: {informerkit.io/replicate-into: "true"}}
//	status: {observedGeneration: 1, copies: 2, namespaces: [team-a, team-b]}
//
// It shows the usual shape of a controller built on package controller:
//
//   - three shared informers from the Manager's factory (ConfigMapReplications, ConfigMaps,
//     Namespaces), with cache indexes (replications by source, copies by replication);
//   - four event sources into one work queue, wired by controller.NewBuilder: the primary
//     resource (For, GenerationChanged so that its own status writes do not wake it), its
//     children (Owns), the source ConfigMaps and the namespaces (Watches with
//     EnqueueRequestsFromMapFunc);
//   - a level-triggered Reconcile that reads through the Manager's client (cached reads that
//     see the controller's own writes), writes each copy with controllerutil.CreateOrUpdate
//     and SetControllerReference, records events, and writes a status with a Ready condition
//     through the status subresource;
//   - owner references that the API accepts: a namespaced owner must share its dependents'
//     namespace (the garbage collector takes a cross-namespace owner for missing and deletes
//     the dependent), so the copies, in other namespaces than the source, are owned by the
//     cluster-scoped ConfigMapReplication; deleting it on a real cluster removes them too.
//
// cmd/demo runs it with a trace of every stage; Setup wires it into a Manager.
package configmapreplicator
