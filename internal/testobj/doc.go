// Package testobj holds the object types and constructors that the toolkit's tests share, so
// that a test ConfigMap, Pod or Widget is declared once. It is for tests only: no non-test
// package may import it (ARCHITECTURE.md, checked by layering_test.go). Runnable Examples
// keep their own type declarations, because a reader of an Example must see how to declare
// one.
//
// Each type declares only the fields some test reads or writes, as a controller's own
// types do (decoding ignores the rest):
//
//   - ConfigMap: metadata and data; also the object of tests that need any namespaced
//     object with nothing but metadata.
//   - Pod: metadata and spec.nodeName.
//   - Widget: a custom resource (example.com/v1, widgets, namespaced, with a status
//     subresource) with a spec (size, replicas) and a status (ready, message). The tests
//     add it to apitest with AddResource; WidgetInfo describes it to the kinds registry.
//
// NewRegistry (Register) is a type registry of the three, for a test's Manager or client.
//
// It imports meta and kinds only, so that every stage from kinds up can use it. The tests
// of meta (which it imports), indexer and deltafifo (below kinds; their objects are plain
// structs with test hooks: an index that fails on demand, a transform counter) keep their
// own types, as do tests that need a type of their own (one no registry knows, a pod of
// the heap gate's shape).
package testobj
