// Package kinds is the type registry: it maps each Go type a program decodes objects into to
// the kind of object it holds (group, version, kind), the resource it is read and written
// through, and its scope. It plays the part of client-go's runtime.Scheme and RESTMapper.
//
// Kubernetes does not send apiVersion and kind with the items of a list of built-in objects,
// so an object read from an informer's cache does not know its own kind; the registry does.
// Events name their object's kind from it, the client finds the resource to read and write
// from it, and owner references get their apiVersion and kind from it.
//
// The built-in kinds are predeclared (kinds.Pod, kinds.Deployment, ...), so a program
// registers its types without writing a group, kind or resource string:
//
//	kinds.MustRegister[*Pod](kinds.Pod)
//
// and describes its custom resources once, next to their types.
package kinds
