// Package celrules evaluates the CEL validation rules of a CustomResourceDefinition's
// schema (x-kubernetes-validations) on custom resources, as the kube-apiserver v1.36 does:
// self typed from the structural schema (int-or-string dynamic, preserved unknown fields
// hidden, embedded resources and the root with apiVersion, kind, metadata.name and
// metadata.generateName), oldSelf transition rules on updates (optionalOldSelf too),
// message, messageExpression, fieldPath and reason, ratcheting of unchanged values, the
// per-call and per-object runtime cost limits, and the errors in the server's words.
//
// Check answers the CRD-time questions: rules that do not compile, messageExpressions,
// fieldPaths and reasons that are invalid, and estimated costs over the per-rule and
// per-CRD limits, as the server's CRD validation words them.
//
// The CEL implementation is cel-go (the one the kube-apiserver uses); the Kubernetes
// libraries (lists, regex, URLs, quantities, IPs and CIDRs, named formats, semantic
// versions) and their cost estimates are written here. docs/apitest.md ("CEL validation
// rules") says what differs from the server.
package celrules
