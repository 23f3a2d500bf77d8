// Package deepcopy copies Go values deeply without generated code: [Copy] is what client-go's
// generated (*corev1.Pod).DeepCopy does, for any type. The copier of a type is compiled once,
// on first use, from its reflect.Type into a plan that copies the value with one memory move
// and then replaces only the pointers, slices, maps and interfaces it holds; bench/ compares
// it with client-go's generated DeepCopy.
//
// Controllers need deep copies because informer caches share their objects: an object read
// from a cache must be copied before it is changed (see informer's cache mutation detector).
package deepcopy
