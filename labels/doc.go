// Package labels parses and matches Kubernetes label selectors ("app=web,tier in (a,b),!old"):
// the selectors of an informer's list and watch, of a Lister's List, and of apitest's server.
// It is apimachinery's pkg/labels with a struct Selector instead of an interface.
//
// The zero Selector selects everything. Parse returns a canonical selector (requirements
// sorted by key, values of in and notin sorted and deduplicated) whose String parses back to
// itself.
package labels
