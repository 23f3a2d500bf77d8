// Package kubecbor is the kube-apiserver's CBOR encoding (application/cbor, and
// application/cbor-seq for watch streams) as informerkit reads and writes it: by
// transcoding to and from JSON, so that CBOR objects decode into the same Go types, through
// the same json tags and decoder (internal/jsondec), as JSON objects do.
//
// What the kube-apiserver 1.37 writes, and ToJSON therefore reads: one data item, prefixed
// with the self-described CBOR tag 55799 (d9 d9 f7); maps with string keys, in no
// particular order; Go strings as byte strings (major type 2) rather than text strings;
// integers; floats in the shortest width that keeps their value (float16 first); []byte
// values as byte strings under tag 22 (base64 later); no indefinite lengths. A watch event
// is a map of "type" and "object" (itself tagged 55799), one data item after another with
// nothing between them (a CBOR sequence, RFC 8742).
//
// Input is bounded: nesting deeper than 10,000 levels (encoding/json's limit), a length
// larger than the bytes left, an indefinite length, a tag other than 55799, 22, 21, 23 or
// 0, a non-string map key, invalid UTF-8, NaN and infinities are each a *SyntaxError with
// the offset of the offending byte; the JSON written is at most a small multiple of the
// input's size.
package kubecbor
