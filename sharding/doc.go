// Package sharding holds the shard selector of the Kubernetes API (kube-apiserver 1.36,
// alpha, feature gate ShardedListAndWatch): a list or watch with
//
//	shardSelector=shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//
// returns only the objects whose field hashes into one of the OR-ed ranges. The hash is the
// 64-bit FNV-1a of the field's bytes (the uid or the namespace, "" for cluster-scoped
// objects); a range is [start, end) in that hash space, written as 0x and exactly 16
// lowercase hex digits, except the end of the space, 0x10000000000000000 (2^64).
//
// Parse accepts what the kube-apiserver accepts, with one difference: the server reads
// the expression with a CEL parser, so it also takes CEL escape sequences and raw or
// triple-quoted strings in the two bounds; Parse refuses them (a valid bound never needs
// them). Selector.String writes the server's normal form, which the server echoes in a
// list's metadata.shardInfo.selector.
package sharding
