// Package deployment is a kube-controller-manager-style controller written with informerkit:
// the shape of the seed's DeploymentController (informers of the primary type and of its
// children, a rate-limited queue drained by 4 workers, MaxRetries, expectations, events)
// for a namespaced custom resource, MiniDeployment, that owns Pods.
//
// For each MiniDeployment the reconciler
//
//   - adds a finalizer, and on deletion deletes the Pods itself before removing it (no
//     garbage collector is needed);
//   - creates or deletes Pods until it controls Spec.Replicas of them, each created from
//     Spec.Template with a controller owner reference, counting on expectations
//     (package controller/expectations) so that a cache that has not yet seen its own
//     creations or deletions never makes it create or delete twice;
//   - rolls a changed template out one Pod at a time, gated on readiness (maxSurge 1,
//     maxUnavailable 0: rollout.go);
//   - records an Event for every Pod created or deleted;
//   - writes Status (counts, observedGeneration, Available and RolledOut conditions)
//     through the status subresource when it changed.
//
// Setup wires it with the controller Builder (For MiniDeployments, Owns Pods with the
// expectations observing them), Descriptor registers it with runner's Runner
// (cmd/controller-manager runs it next to the configmap replicator, with leader election).
// SetupSharded runs it on every replica of a Manager with ManagerOptions.Sharding at once,
// each on its share of the MiniDeployments, caching only those and their Pods.
//
// docs/deployment-controller.md maps each piece of the seed's DeploymentController to the
// code here and explains the sharded setup. crd.yaml is the CustomResourceDefinition for a
// real cluster (generated from the markers of MiniDeployment) and rbac.yaml the roles the
// controller needs (generated from what it declares).
package deployment
