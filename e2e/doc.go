// Package e2e holds informerkit's end-to-end tests against a real kube-apiserver v1.36.3 and
// etcd v3.6.8, built from the Go module proxy by e2e/tools and started by package
// e2e/cluster. TestMain starts one cluster for the whole package; tests get it with
// cluster.ForTest(t). Run them with `make e2e` from the repository root (see README.md).
package e2e
