// Package nodepool is a NodePool controller, written as a newcomer who knows
// controller-runtime would: a cluster-scoped NodePool custom resource (its CRD generated
// from the types, crd.yaml) picks Nodes with a label selector; the controller sets the
// pool's labels and taints on them with patches that carry an optimistic lock, drains the
// Pods of a Node NotReady past the pool's grace period (at most MaxUnavailable Nodes at a
// time, a count or a percentage), records Events and reports a status. cmd/nodepool runs it
// with leader election and prints its roles (-rbac).
//
// It is the proof that a controller needs no support code beyond its own logic: the
// reconciler imports controller, controller/client and meta only, states each kind once
// (types.go), and its test runs on the workbench (controller/controllertest) with simulated
// nodes in a synctest bubble, so the grace periods take no time.
package nodepool
