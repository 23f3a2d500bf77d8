// Package share is the structural-sharing engine of informer caches: objects in a cache are
// read-only, so identical parts of different objects can be one value in memory.
//
// A Sharer walks every object it is given and replaces each string, pointed-to value, slice
// backing array and map that is equal, by content, to one an earlier object already holds
// with that one, and trims slices whose capacity exceeds their length (JSON decoding doubles
// capacities). The pods of one ReplicaSet then share their labels, annotations, owner
// references, container env, ports, resources, probes and volume sources, and every pod
// shares its namespace, image names, node name and so on with others.
//
// Rules:
//
//   - The table holds canonical values through weak pointers: it never keeps a value alive;
//     once no object holds it, the garbage collector frees it and the entry is dropped at the
//     next sweep.
//   - A per-site policy (a site is a struct field, a slice element, a map key or value of a
//     given type; a JSON path inside interface{} values) stops looking up values that are
//     almost always unique (names, UIDs, IPs, timestamps) when a window of lookups saved
//     fewer bytes than its new table entries cost, and probes again later with exponential
//     backoff.
//   - A reference is written only when it is replaced by another: values already shared,
//     which readers of the cache may be reading, are never written. Unexported fields are
//     compared (strings by content, references by address) but never changed.
//   - Walking plans are compiled once per type (plan.go); the walk works on raw memory
//     (walk.go; dynamic.go for interface{} values), with hashing and equality by plan
//     (hash.go). share.go holds the table, strtable.go the strings' own table (read without
//     a lock by Sharer.String, which parallel decoders call), sites.go the per-site policy.
package share
