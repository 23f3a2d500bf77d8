package client

import (
	"context"

	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
)

// annotateTraceparent sets the traceparent annotation that ctx asks for
// (tracing.WithTraceparentAnnotation: a reconcile of a controller with
// Options.TraceparentAnnotation) on obj, and reports whether it changed obj. An object
// without a writable ObjectMeta is left as it is.
func annotateTraceparent[T meta.Object](ctx context.Context, obj T) bool {
	key, value, ok := tracing.TraceparentAnnotation(ctx)
	if !ok {
		return false
	}
	mo, isMeta := any(obj).(meta.MetaObject)
	if !isMeta {
		return false
	}
	m := mo.GetObjectMeta()
	if m == nil {
		return false
	}
	if m.Annotations[key] == value {
		return false
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = value
	return true
}
