// Package bench runs informerkit and client-go v0.37.2 side by side in one `go test -bench`
// process so that every figure is a ratio measured on the same machine at the same moment.
// Benchmarks name their implementation with a final "impl=informerkit" or "impl=client-go"
// element; `make bench-compare` feeds the output to cmd/benchtable for the table of medians.
// This is the only module, with e2e/, allowed to import k8s.io/client-go.
package bench
