package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/deepcopy"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// GetOptions are the options of a cache read of one object.
type GetOptions struct {
	// UnsafeDisableDeepCopy returns the cached object itself instead of a deep copy. It
	// saves the copy; the caller must never change the object (the informer's cache
	// mutation detector catches code that does). Default false: a copy the caller owns.
	UnsafeDisableDeepCopy bool
}

// ListOptions select the objects of a cache read of many.
type ListOptions struct {
	// Namespace restricts the list to one namespace. Default "": every namespace the cache
	// holds.
	Namespace string
	// LabelSelector keeps the objects whose labels match. Default: all.
	LabelSelector labels.Selector
	// Index and IndexValue read through a cache index (added with Typed.AddIndexers): the
	// objects whose values for index Index include IndexValue. Default "": no index.
	Index, IndexValue string
	// UnsafeDisableDeepCopy returns the cached objects themselves (see GetOptions).
	UnsafeDisableDeepCopy bool
}

// Typed is the client of one Go type T: reads from T's informer, writes to T's resource.
// Get one with TypedFor or TypedForKind; it is cheap, and every Typed[T] of a Client shares the
// informer and the read-your-writes bookkeeping.
type Typed[T meta.Object] struct {
	c     *Client
	fixed *kinds.Info // TypedForKind's
	state atomic.Pointer[typedState[T]]
}

// typedState is what a Typed resolves once: T's kind and resource.
type typedState[T meta.Object] struct {
	info kinds.Info
	res  *apiclient.Resource[T]
}

// TypedFor returns the client of T, whose kind and resource come from the client's registry. T
// must be registered (kinds.MustRegister[*Pod](kinds.Pod) for a built-in kind) by the time of
// the first call; until it is, calls return the *kinds.NotRegisteredError.
func TypedFor[T meta.Object](c *Client) *Typed[T] {
	return &Typed[T]{c: c}
}

// TypedForKind returns the client of T for the kind info, whatever the registry says: for
// *meta.Unstructured, or a type used for several kinds. An invalid info is returned as
// the error of every call.
func TypedForKind[T meta.Object](c *Client, info kinds.Info) *Typed[T] {
	return &Typed[T]{c: c, fixed: &info}
}

// resolve returns T's kind and resource, looking them up on the first call that succeeds.
func (t *Typed[T]) resolve() (*typedState[T], error) {
	if st := t.state.Load(); st != nil {
		return st, nil
	}
	var info kinds.Info
	if t.fixed != nil {
		info = *t.fixed
	} else {
		var err error
		if info, err = kinds.InfoForIn[T](t.c.opts.Registry); err != nil {
			return nil, err
		}
	}
	if err := info.Validate(); err != nil {
		return nil, err
	}
	st := &typedState[T]{info: info, res: apiclient.NewResource[T](t.c.api, info.GroupVersionResource()).WithKind(info.Kind)}
	t.state.Store(st)
	return st, nil
}

// Info returns the kind and resource of T (the zero Info if T is not registered).
func (t *Typed[T]) Info() kinds.Info {
	st, err := t.resolve()
	if err != nil {
		return kinds.Info{}
	}
	return st.info
}

// Resource returns the typed API client of T's resource, for requests the client does not
// offer (watches, paged lists, dry runs); they bypass the cache and read-your-writes.
func (t *Typed[T]) Resource() (*apiclient.Resource[T], error) {
	st, err := t.resolve()
	if err != nil {
		return nil, err
	}
	return st.res, nil
}

// Informer returns the factory's informer of T, creating it if needed (it runs when the
// factory starts, or at once if the client has started). Use it to add event handlers,
// indexes or controller sources before the manager starts.
func (t *Typed[T]) Informer() (*informer.Informer[T], error) {
	st, err := t.resolve()
	if err != nil {
		return nil, err
	}
	return informer.InformerFor[T](t.c.factory, st.info.GroupVersionResource()), nil
}

// AddIndexers adds indexes to T's cache (creating the informer if needed), for
// ListOptions.Index.
func (t *Typed[T]) AddIndexers(indexers indexer.Indexers[T]) error {
	inf, err := t.Informer()
	if err != nil {
		return err
	}
	return inf.AddIndexers(indexers)
}

// informer returns T's informer, synced: it starts it if needed (unless DisableStartOnRead)
// and waits for its first list, bounded by ctx and CacheSyncTimeout.
func (t *Typed[T]) informer(ctx context.Context) (*informer.Informer[T], error) {
	st, err := t.resolve()
	if err != nil {
		return nil, err
	}
	gvr := st.info.GroupVersionResource()
	inf, ok := informer.Lookup[T](t.c.factory, gvr)
	if !ok {
		if t.c.opts.DisableStartOnRead {
			return nil, fmt.Errorf("client: reading %s as %v: %w", gvr, reflect.TypeFor[T](), ErrNoInformer)
		}
		if inf, err = startOnRead[T](t.c, gvr); err != nil {
			return nil, err
		}
	}
	if inf.HasSynced() {
		return inf, nil
	}
	if !inf.HasStarted() {
		startCtx := t.c.started()
		if startCtx == nil {
			return nil, fmt.Errorf("client: reading %s: %w (start the manager first)", gvr, ErrNotStarted)
		}
		t.c.factory.Start(startCtx)
	}
	sctx, cancel := context.WithTimeout(ctx, t.c.opts.CacheSyncTimeout)
	defer cancel()
	select {
	case <-inf.Synced():
		return inf, nil
	case <-sctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if n := inf.Stats().NotFound; n > 0 {
			return nil, fmt.Errorf("client: reading %s: the resource is not served (%d attempts answered 404)", gvr, n)
		}
		return nil, fmt.Errorf("client: reading %s: the informer did not sync within %v", gvr, t.c.opts.CacheSyncTimeout)
	}
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Get reads the object namespace/name ("" for cluster-scoped objects) from T's cache, as a
// deep copy the caller may change. If this client wrote the object and the cache has not
// caught up yet, Get waits for it (ReadYourWritesTimeout, then a *StaleCacheError). An
// object the cache does not hold gives an error for which meta.IsNotFound is true.
func (t *Typed[T]) Get(ctx context.Context, namespace, name string, opts GetOptions) (T, error) {
	var zero T
	inf, err := t.informer(ctx)
	if err != nil {
		return zero, err
	}
	st, _ := t.resolve() // resolved by informer
	if !st.info.Namespaced {
		namespace = "" // a cluster-scoped object has no namespace, whatever the caller says
	}
	key := objectKey(namespace, name)
	if err := t.awaitWrites(ctx, inf, func(k string) bool { return k == key }); err != nil {
		return zero, err
	}
	obj, err := inf.Lister().Get(namespace, name)
	if err != nil {
		return zero, err
	}
	if opts.UnsafeDisableDeepCopy {
		return obj, nil
	}
	return deepcopy.Copy(obj), nil
}

// List reads the objects opts selects from T's cache, as deep copies. It waits, like Get,
// for this client's writes of objects in opts.Namespace (every namespace if "") that the
// cache does not show yet.
func (t *Typed[T]) List(ctx context.Context, opts ListOptions) ([]T, error) {
	inf, err := t.informer(ctx)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if opts.Namespace != "" {
		prefix = opts.Namespace + "/"
	}
	if err := t.awaitWrites(ctx, inf, func(k string) bool { return strings.HasPrefix(k, prefix) }); err != nil {
		return nil, err
	}
	var objs []T
	switch {
	case opts.Index != "":
		objs, err = inf.GetIndexer().ByIndex(opts.Index, opts.IndexValue)
		if err != nil {
			return nil, fmt.Errorf("client: listing %s: %w", t.Info().GroupVersionResource(), err)
		}
		objs = filter(objs, opts.Namespace, opts.LabelSelector)
	case opts.Namespace != "":
		objs = inf.Lister().Namespace(opts.Namespace).List(opts.LabelSelector)
	default:
		objs = inf.Lister().List(opts.LabelSelector)
	}
	if !opts.UnsafeDisableDeepCopy {
		for i, o := range objs {
			objs[i] = deepcopy.Copy(o)
		}
	}
	return objs, nil
}

func filter[T meta.Object](objs []T, namespace string, sel labels.Selector) []T {
	out := objs[:0]
	for _, o := range objs {
		if (namespace == "" || o.GetNamespace() == namespace) && (sel.Empty() || sel.Matches(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out
}

// awaitWrites waits until the cache shows this client's writes of the keys match selects.
func (t *Typed[T]) awaitWrites(ctx context.Context, inf *informer.Informer[T], match func(string) bool) error {
	if t.c.opts.ReadYourWritesTimeout < 0 {
		return nil
	}
	gvr := t.Info().GroupVersionResource()
	w := tracker[T](t.c, gvr)
	left := w.unshown(inf, match)
	if len(left) == 0 {
		return nil
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, t.c.opts.ReadYourWritesTimeout)
	defer cancel()
	err := inf.WaitUntil(wctx, func() bool {
		left = w.unshown(inf, match)
		return len(left) == 0
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for k, p := range left {
		e := &StaleCacheError{Resource: gvr.String(), Key: k, Written: p.rvText,
			Applied: inf.AppliedResourceVersion(), Waited: time.Since(start)}
		if cached, ok, _ := inf.GetIndexer().GetByKey(k); ok {
			e.Cached = cached.GetResourceVersion()
		}
		return e
	}
	return err
}

// ---- writes

// Create creates obj (in its namespace) and returns the server's version of it. Reads of
// the object through this client then see at least that version. In a reconcile of a
// controller with Options.TraceparentAnnotation, obj gets that annotation first.
func (t *Typed[T]) Create(ctx context.Context, obj T, opts CreateOptions) (T, error) {
	st, err := t.resolve()
	if err != nil {
		var zero T
		return zero, err
	}
	setTypeMeta(st.info, obj)
	annotateTraceparent(ctx, obj)
	out, err := st.res.Create(ctx, obj, opts)
	return t.wrote(st, out, err)
}

// Update replaces obj (addressed by its namespace and name; its resourceVersion must be
// current, or the server answers 409 Conflict) and returns the server's version. With a
// status subresource, the update leaves the status unchanged: use Status().Update. Like
// Create, it sets the traceparent annotation a reconcile's context asks for.
func (t *Typed[T]) Update(ctx context.Context, obj T, opts UpdateOptions) (T, error) {
	st, err := t.resolve()
	if err != nil {
		var zero T
		return zero, err
	}
	setTypeMeta(st.info, obj)
	annotateTraceparent(ctx, obj)
	out, err := st.res.Update(ctx, obj, opts)
	return t.wrote(st, out, err)
}

// Patch applies a patch of type pt to namespace/name and returns the result.
func (t *Typed[T]) Patch(ctx context.Context, namespace, name string, pt PatchType, data []byte, opts PatchOptions) (T, error) {
	st, err := t.resolve()
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := st.res.Namespace(namespace).Patch(ctx, name, pt, data, opts)
	return t.wrote(st, out, err)
}

// Apply is a server-side apply of obj (a struct or map carrying apiVersion, kind and the
// fields the manager owns) to namespace/name; opts.FieldManager is required.
func (t *Typed[T]) Apply(ctx context.Context, namespace, name string, obj any, opts ApplyOptions) (T, error) {
	st, err := t.resolve()
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := st.res.Namespace(namespace).Apply(ctx, name, obj, opts)
	return t.wrote(st, out, err)
}

// Delete deletes obj (by namespace and name). Reads through this client then no longer see
// it (or see it marked for deletion, while finalizers hold it).
func (t *Typed[T]) Delete(ctx context.Context, obj T, opts DeleteOptions) error {
	st, err := t.resolve()
	if err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if err := st.res.Namespace(ns).Delete(ctx, name, opts); err != nil {
		return err
	}
	if t.c.opts.ReadYourWritesTimeout >= 0 && t.c.inScope(st.info, ns) {
		uid := ""
		if u, ok := any(obj).(interface{ GetUID() string }); ok {
			uid = u.GetUID()
		}
		inf, _ := informer.Lookup[T](t.c.factory, st.info.GroupVersionResource())
		tracker[T](t.c, st.info.GroupVersionResource()).deleted(inf, objectKey(ns, name), uid)
	}
	return nil
}

// Status returns the writer of T's status subresource.
func (t *Typed[T]) Status() *StatusWriter[T] { return &StatusWriter[T]{t: t} }

// StatusWriter writes the status subresource of T's objects.
type StatusWriter[T meta.Object] struct{ t *Typed[T] }

// Update replaces the status of obj; the rest of obj is ignored. T's kind must have a
// status subresource.
func (s *StatusWriter[T]) Update(ctx context.Context, obj T, opts UpdateOptions) (T, error) {
	st, err := s.check()
	if err != nil {
		var zero T
		return zero, err
	}
	setTypeMeta(st.info, obj)
	out, err := st.res.UpdateStatus(ctx, obj, opts)
	return s.t.wrote(st, out, err)
}

// Patch patches the status subresource of namespace/name.
func (s *StatusWriter[T]) Patch(ctx context.Context, namespace, name string, pt PatchType, data []byte, opts PatchOptions) (T, error) {
	st, err := s.check()
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := st.res.Namespace(namespace).Patch(ctx, name, pt, data, opts, "status")
	return s.t.wrote(st, out, err)
}

// Apply is a server-side apply to the status subresource of namespace/name.
func (s *StatusWriter[T]) Apply(ctx context.Context, namespace, name string, obj any, opts ApplyOptions) (T, error) {
	st, err := s.check()
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := st.res.Namespace(namespace).Apply(ctx, name, obj, opts, "status")
	return s.t.wrote(st, out, err)
}

// ErrNoStatusSubresource is wrapped by the error of a status write of a kind without one.
var ErrNoStatusSubresource = errors.New("the kind has no status subresource")

func (s *StatusWriter[T]) check() (*typedState[T], error) {
	st, err := s.t.resolve()
	if err != nil {
		return nil, err
	}
	if !st.info.StatusSubresource {
		return nil, fmt.Errorf("client: %v: %w (kinds.Info.StatusSubresource is false)", st.info, ErrNoStatusSubresource)
	}
	return st, nil
}

// wrote records a successful write for read-your-writes.
func (t *Typed[T]) wrote(st *typedState[T], out T, err error) (T, error) {
	if err != nil || t.c.opts.ReadYourWritesTimeout < 0 || any(out) == nil {
		return out, err
	}
	if !t.c.inScope(st.info, out.GetNamespace()) {
		return out, nil // the informer will never show it: a read would only wait
	}
	// Tracked even without an informer yet: the first read starts one, whose first list may
	// come from the API server's watch cache and be older than this write.
	inf, _ := informer.Lookup[T](t.c.factory, st.info.GroupVersionResource())
	tracker[T](t.c, st.info.GroupVersionResource()).wrote(inf, objectKey(out.GetNamespace(), out.GetName()), out.GetResourceVersion())
	return out, nil
}

// typeMetaPaths caches, per Go type, the index path of an embedded meta.TypeMeta.
var typeMetaPaths sync.Map

var typeMetaType = reflect.TypeFor[meta.TypeMeta]()

// setTypeMeta fills in obj's apiVersion and kind if it embeds an empty TypeMeta (objects
// read from caches of built-in types have none): the API server wants them in a body.
func setTypeMeta[T meta.Object](info kinds.Info, obj T) {
	if u, ok := any(obj).(*meta.Unstructured); ok {
		if u != nil && u.GetKind() == "" {
			u.SetAPIVersion(info.APIVersion())
			u.SetKind(info.Kind)
		}
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	st := v.Elem().Type()
	p, ok := typeMetaPaths.Load(st)
	if !ok {
		var path []int
		if f, found := st.FieldByName("TypeMeta"); found && f.Type == typeMetaType {
			path = f.Index
		}
		typeMetaPaths.Store(st, path)
		p = path
	}
	path := p.([]int)
	if path == nil {
		return
	}
	f, err := v.Elem().FieldByIndexErr(path)
	if err != nil || !f.CanSet() {
		return
	}
	tm := f.Addr().Interface().(*meta.TypeMeta)
	if tm.Kind == "" && tm.APIVersion == "" {
		*tm = info.TypeMeta()
	}
}
