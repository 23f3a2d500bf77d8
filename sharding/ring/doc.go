// Package ring shards a controller across its replicas: each replica holds a Lease of its
// own (coordination.k8s.io/v1) labelled with the ring's name, every replica watches the
// ring's Leases, and from the live members each computes the same Assignment of the 64-bit
// hash space of package sharding (rendezvous hashing over equal buckets: a join or a leave
// moves about 1/N of the space and nothing else). A replica then lists and watches only
// its ranges with a shard selector, or filters on the client when the server ignores
// shard selectors. The design, the handover protocol and its failure cases are in
// docs/sharding.md.
package ring
