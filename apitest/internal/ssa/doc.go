// Package ssa is server-side apply and the managedFields bookkeeping behind it, as the
// kube-apiserver does them (k8s.io/apimachinery's managedfields over
// sigs.k8s.io/structured-merge-diff), on JSON values described by internal/mergeschema:
//
//   - FieldSet, Compare, Merge, RemoveFields and Validate are the walks apply is made of:
//     which fields a value sets (as internal/fieldpath sets), what changed between two
//     values, a configuration merged into an object (maps key by key, list-maps by key,
//     sets by value, atomic values whole), fields removed.
//   - FieldManager keeps an object's managedFields: Update records a create, update or
//     patch (operation Update, one entry per manager and API version, at most ten, older
//     ones merged into "ancient-changes"); Apply merges a configuration, fails with a
//     *ConflictError when another manager owns a field it changes (unless forced, which
//     moves the field), removes the fields the applier stopped applying that nobody else
//     owns, and records operation Apply. The first apply to an object without managedFields
//     gives its fields to "before-first-apply"; kubectl's move from client-side apply (its
//     last-applied-configuration) is honoured as the kube-apiserver honours it.
//
// Errors and messages are the kube-apiserver's, word for word, so that apitest answers as
// it does; e2e's fidelity scenarios compare them.
package ssa
