// Package kuberecord records what a Kubernetes API server serves and makes of the built-in
// resources, in a form two servers can be compared by: the resources of its discovery
// (legacy and aggregated, which must agree) with their names, scope, verbs, subresources,
// storage version hashes and Table columns, and, for every resource that has a stub (one
// valid object, testdata/kube-apiserver/stubs.json), what a create answers, whether it sets
// metadata.generation, whether an update creates a missing object, which names it takes
// and the object's Table row.
//
// e2e records the real kube-apiserver and fails when it no longer matches
// testdata/kube-apiserver (INFORMERKIT_UPDATE_RECORDING=1 rewrites the files, and
// e2e/tools/schemagen generates apitest's resource table from served.json); apitest's tests
// record apitest and compare it with the same files. It is for tests only.
//
// Recordings are normalised so that two runs of one server give the same bytes: uids,
// resourceVersions, timestamps, allocated IPs and ports, and the Age cells are replaced by
// placeholders. Encode writes one resource or object per line, so that a diff names what
// changed.
package kuberecord
