// Package patchgen computes the patch that turns one object into another, for the three
// patch types the kube-apiserver accepts from a client: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902) and strategic merge patch (merge lists by their merge key, from the
// patch strategies of the built-in kinds in internal/kubeschema). Objects are JSON-shaped
// values (map[string]any, []any, string, json.Number or float64, bool); a null in the
// target counts as an absent field, since a merge patch deletes where it writes null.
//
// controller/client builds its patches from two objects with it (Typed.PatchFrom); its
// fuzz targets apply every patch (a model of each RFC, and apitest's strategic merge patch)
// and compare the result with the target.
package patchgen
