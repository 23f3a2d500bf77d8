// Package ring shards a controller across its replicas: each replica holds a Lease of its
// own (coordination.k8s.io/v1) labelled with the ring's name, every replica watches the
// ring's Leases, and from the live members each computes the same Assignment of the 64-bit
// hash space of package sharding (rendezvous hashing over equal buckets: a join or a leave
// moves about 1/N of the space and nothing else). A Ring is the listwatch.Share of its
// replica's informers (package sharding/listwatch: they list and watch only its ranges),
// and Begin gates the replica's reconciles so that a range changes hands only once the
// reconciles begun on it have ended. The controller Manager runs a Ring for its sharded
// controllers (controller.ManagerOptions.Sharding). The design, the handover protocol and
// its failure cases are in docs/sharding.md.
package ring
