// Package testobj holds the object types and constructors that the toolkit's tests share, so
// that a test ConfigMap or Pod is declared once. It is for tests only: no non-test package
// may import it (ARCHITECTURE.md, checked by layering_test.go). Runnable Examples keep their
// own type declarations, because a reader of an Example must see how to declare one.
package testobj
