// Package jsondec is the JSON decoder informerkit reads objects with: a decoder compiled
// once per Go type that reads the input in a single pass.
//
// It gives the same result as encoding/json.Unmarshal for every input both accept (struct
// tags, embedded structs, pointers, maps, slices, arrays, interfaces, json.Number,
// json.RawMessage, json.Unmarshaler and encoding.TextUnmarshaler implementations) and fails
// where encoding/json fails. What differs is how:
//
//   - The field tables of a struct type are built by reflection at first use; decoding then
//     writes through offsets, with no reflection per field. The member the decoder expects
//     next is tried before the name table, since servers write members in declaration order.
//   - There is no separate validation pass. Members a type does not declare are checked and
//     skipped by a scanner that reads strings eight bytes at a time and tracks brackets on a
//     small stack; skipping allocates nothing.
//   - Malformed input is a *SyntaxError with the offset of the offending byte, found where it
//     is reached: the destination may be partly written by then.
//   - Options.Strings lets a caller supply strings it already holds instead of allocating
//     new ones (informerkit's caches use it to share duplicated values).
//
// The rare shapes whose rules belong to encoding/json alone (",string" fields, an interface
// that already holds a pointer) are handed to encoding/json for that value.
package jsondec
