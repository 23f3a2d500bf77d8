package listwatch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/deepcopy"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
)

// ErrRangesChanged ends a sharded watch when the held ranges changed and the watch could
// not move to the new ranges by itself (the list at its resourceVersion failed, e.g.
// compacted): the reflector then relists, with the new ranges.
var ErrRangesChanged = errors.New("listwatch: the held hash ranges changed")

// Share is the part of the 64-bit hash space a replica holds, which changes as replicas join
// and leave (a *ring.Ring).
type Share interface {
	// Snapshot returns the ranges held now (none when nothing is held) and a channel that is
	// closed at their next change.
	Snapshot() (held []sharding.Range, changed <-chan struct{})
}

// Options say which hash places an object in a share.
type Options struct {
	// Field is the field of the object that is hashed: sharding.FieldUID (the default)
	// spreads any set of objects evenly; sharding.FieldNamespace keeps a namespace on one
	// replica (a cluster-scoped object hashes "", so all of them land on one replica).
	Field sharding.Field
	// ByOwner hashes the uid of the object's controller owner reference (controller: true)
	// instead of Field, and the object's own uid when it has none: children follow their
	// owner's shard under uid sharding. The server's shard selector hashes only an object's
	// own uid or namespace, so ByOwner filters on the client: the cache holds the share, but
	// every object and event still crosses the network. Needs Field uid (the default).
	ByOwner bool
}

// uidObject and ownedObject are what client-side filtering reads from an object.
type uidObject interface {
	GetUID() string
}

type ownedObject interface {
	GetUID() string
	GetOwnerReferences() []meta.OwnerReference
}

// New returns a ListerWatcher that lists and watches only the objects of base whose hash
// share holds.
//
// Each LIST and WATCH carries the held ranges as a shardSelector (not with ByOwner), so a
// kube-apiserver with the ShardedListAndWatch gate sends only them (cache and watch traffic
// ≈ 1/N). Before its first request it probes the server with a one-item list with a
// selector: a server that ignores the parameter answers without metadata.shardInfo. Then the
// selector is not sent and the objects are filtered here, before the cache: memory is still
// ≈ 1/N, but every replica receives and decodes every object and event. Results are
// filtered here in both cases (one FNV hash per object), so an object outside the ranges
// never reaches the cache.
//
// When the held ranges change, the open watch moves to them without a relist and without
// dropping the ranges it keeps: it sends DELETED for the objects of lost ranges, lists the
// new ranges at exactly the resourceVersion it has delivered and sends ADDED for the
// objects it did not have, then watches the new ranges from that resourceVersion. To know
// the objects it delivered it keeps a key → object map (one pointer and one key per cached
// object; the objects are the cache's). If that list fails (a compacted resourceVersion),
// the watch ends with ErrRangesChanged and the reflector relists, after its backoff. While
// nothing is held it lists the one-hash range [0, 1) and filters it out.
//
// New fails if opts are invalid, or if T cannot be filtered on the client by the chosen
// hash (no GetUID for uid sharding, no GetOwnerReferences with ByOwner).
func New[T meta.Object](base apiclient.ListerWatcher[T], share Share, opts Options) (apiclient.ListerWatcher[T], error) {
	if base == nil || share == nil {
		panic("listwatch.New: nil ListerWatcher or Share")
	}
	if opts.Field == "" {
		opts.Field = sharding.FieldUID
	}
	if err := Check[T](opts); err != nil {
		return nil, err
	}
	s := &shardedLW[T]{base: base, share: share, opts: opts, known: map[string]T{}, support: new(atomic.Int32)}
	if opts.ByOwner {
		s.support.Store(supportNo) // nothing for the server to select on
	}
	return s, nil
}

// ErrType is wrapped by the errors of New and Check when T cannot be filtered on the client
// as the options ask.
var ErrType = errors.New("listwatch: the type cannot be filtered as asked")

// Validate reports what is wrong with the options, if anything.
func (o Options) Validate() error {
	switch {
	case o.Field != "" && !o.Field.Valid():
		return fmt.Errorf("listwatch: unsupported Field %q", o.Field)
	case o.ByOwner && o.Field != "" && o.Field != sharding.FieldUID:
		return fmt.Errorf("listwatch: ByOwner hashes uids, but Field is %q", o.Field)
	}
	return nil
}

// Check reports whether New accepts opts for T: the options are valid and T has what
// client-side filtering reads (GetUID for uid sharding, GetOwnerReferences with ByOwner).
func Check[T meta.Object](opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	var zero T
	switch {
	case opts.ByOwner && !implements[ownedObject](zero):
		return fmt.Errorf("%w: %T has no GetOwnerReferences: cannot follow owners", ErrType, zero)
	case opts.Field != sharding.FieldNamespace && !implements[uidObject](zero):
		return fmt.Errorf("%w: %T has no GetUID: cannot filter by uid", ErrType, zero)
	}
	return nil
}

func implements[I any, T any](v T) bool {
	_, ok := any(v).(I)
	return ok
}

type shardedLW[T meta.Object] struct {
	base    apiclient.ListerWatcher[T]
	share   Share
	opts    Options
	support *atomic.Int32 // supportUnknown, supportYes, supportNo; shared with tuned copies

	mu    sync.Mutex
	known map[string]T // objects delivered (list items and watch events), by key
}

const (
	supportUnknown = iota
	supportYes
	supportNo
)

// nothing selects a single hash: what a member that holds nothing asks for.
var nothing = sharding.Range{Start: 0, End: 1}

func key(o meta.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// share is the held ranges at one moment: the selector to send, the matcher to filter
// with, and the channel closed when they change.
type share[T meta.Object] struct {
	sel     sharding.Selector
	match   func(T) bool
	changed <-chan struct{}
}

func (s *shardedLW[T]) current() share[T] {
	held, changed := s.share.Snapshot()
	if len(held) == 0 {
		return share[T]{sel: sharding.NewSelector(s.opts.Field, nothing), match: func(T) bool { return false }, changed: changed}
	}
	sel := sharding.NewSelector(s.opts.Field, held...)
	return share[T]{sel: sel, changed: changed, match: func(o T) bool { return sel.MatchesHash(s.hash(o)) }}
}

// hash is the hash that places o: of its namespace, its uid, or its controller owner's uid.
func (s *shardedLW[T]) hash(o T) uint64 {
	if s.opts.Field == sharding.FieldNamespace {
		return sharding.Hash(o.GetNamespace())
	}
	if s.opts.ByOwner {
		oo := any(o).(ownedObject) // checked by New
		for _, ref := range oo.GetOwnerReferences() {
			if ref.IsController() && ref.UID != "" {
				return sharding.Hash(ref.UID)
			}
		}
	}
	return sharding.Hash(any(o).(uidObject).GetUID()) // checked by New
}

// probe learns once whether the server honours shardSelector: a one-item list with a
// selector comes back with metadata.shardInfo only if it does. (A streaming list, the
// reflector's WatchList, has no list metadata to tell.)
func (s *shardedLW[T]) probe(ctx context.Context, sel sharding.Selector) (bool, error) {
	switch s.support.Load() {
	case supportYes:
		return true, nil
	case supportNo:
		return false, nil
	}
	// At resourceVersion "" the limit holds (at "0" a watch cache answers everything).
	l, err := s.base.List(ctx, apiclient.ListOptions{ShardSelector: sel.String(), Limit: 1})
	if err != nil {
		return false, err
	}
	if l.ShardInfo == nil {
		s.support.Store(supportNo)
		return false, nil
	}
	s.support.Store(supportYes)
	return true, nil
}

// Supported reports whether lw, made by New, found that the server honours
// shard selectors (false also before its first list or watch).
func Supported[T meta.Object](lw apiclient.ListerWatcher[T]) bool {
	s, ok := lw.(*shardedLW[T])
	return ok && s.support.Load() == supportYes
}

func (s *shardedLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	sh := s.current()
	l, err := s.list(ctx, opts, sh)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if opts.Continue == "" {
		clear(s.known) // a new list: what it returns is what the store will hold
	}
	for _, o := range l.Items {
		s.known[key(o)] = o
	}
	s.mu.Unlock()
	return l, nil
}

// list lists with the share's selector (if the server honours it) and filters the items.
func (s *shardedLW[T]) list(ctx context.Context, opts apiclient.ListOptions, sh share[T]) (*meta.List[T], error) {
	supported, err := s.probe(ctx, sh.sel)
	if err != nil {
		return nil, err
	}
	if supported {
		opts.ShardSelector = sh.sel.String()
	}
	l, err := s.base.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	kept := l.Items[:0]
	for _, o := range l.Items {
		if sh.match(o) {
			kept = append(kept, o)
		}
	}
	clear(l.Items[len(kept):])
	l.Items = kept
	return l, nil
}

func (s *shardedLW[T]) watch(ctx context.Context, opts apiclient.ListOptions, sh share[T]) (apiclient.Watcher[T], error) {
	supported, err := s.probe(ctx, sh.sel)
	if err != nil {
		return nil, err
	}
	if supported {
		opts.ShardSelector = sh.sel.String()
	}
	return s.base.Watch(ctx, opts)
}

func (s *shardedLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	sh := s.current()
	w, err := s.watch(ctx, opts, sh)
	if err != nil {
		return nil, err
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		s.mu.Lock()
		clear(s.known) // a streaming list: its initial events are what the store will hold
		s.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(ctx)
	fw := &filteredWatcher[T]{lw: s, inner: w, out: make(chan apiclient.Event[T]), cancel: cancel, opts: opts, rv: opts.ResourceVersion}
	if f, ok := w.(interface{ Fallbacks() []error }); ok {
		fw.fallbacks = f.Fallbacks()
	}
	go fw.run(ctx, sh)
	return fw, nil
}

// filteredWatcher forwards the events of inner that match the member's share, and moves to
// a new share when it changes.
type filteredWatcher[T meta.Object] struct {
	lw        *shardedLW[T]
	inner     apiclient.Watcher[T] // run's own: move replaces it
	out       chan apiclient.Event[T]
	cancel    context.CancelFunc
	opts      apiclient.ListOptions
	rv        string  // the last resourceVersion delivered
	fallbacks []error // the first inner watcher's, read before run starts

	mu  sync.Mutex
	err error // why the inner watcher that ended the stream ended
}

func (f *filteredWatcher[T]) ResultChan() <-chan apiclient.Event[T] { return f.out }

func (f *filteredWatcher[T]) Stop() { f.cancel() }

// Err returns, once ResultChan is closed, the inner watcher's Err: why its stream ended
// (nil for a clean close or a Stop). The reflector tells a broken connection from a clean
// end by it; hiding it would make a cut stream look like a server's clean close.
func (f *filteredWatcher[T]) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Fallbacks returns what the inner watcher gave up to open (WebSocket for chunked HTTP,
// protobuf for JSON), for the reflector's Stats. The watches a move to new ranges opens
// are the client's later ones, which open the fallback directly and report none.
func (f *filteredWatcher[T]) Fallbacks() []error { return f.fallbacks }

// innerEnded records why f.inner's stream ended.
func (f *filteredWatcher[T]) innerEnded() {
	e, ok := f.inner.(interface{ Err() error })
	if !ok {
		return
	}
	err := e.Err()
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *filteredWatcher[T]) send(ctx context.Context, ev apiclient.Event[T]) bool {
	select {
	case f.out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *filteredWatcher[T]) run(ctx context.Context, sh share[T]) {
	defer close(f.out)
	defer func() { f.inner.Stop() }()
	in := f.inner.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.changed:
			next, ok := f.move(ctx, sh)
			if !ok {
				f.send(ctx, apiclient.Event[T]{Type: apiclient.Error, Err: ErrRangesChanged})
				return
			}
			sh, in = next, f.inner.ResultChan()
		case ev, ok := <-in:
			if !ok {
				f.innerEnded() // before the deferred close of out
				return
			}
			switch ev.Type {
			case apiclient.Added, apiclient.Modified, apiclient.Deleted:
				if !sh.match(ev.Object) {
					continue
				}
				f.lw.mu.Lock()
				if ev.Type == apiclient.Deleted {
					delete(f.lw.known, key(ev.Object))
				} else {
					f.lw.known[key(ev.Object)] = ev.Object
				}
				f.lw.mu.Unlock()
				f.rv = ev.Object.GetResourceVersion()
			case apiclient.Bookmark:
				f.rv = ev.Object.GetResourceVersion()
			}
			if !f.send(ctx, ev) {
				return
			}
		}
	}
}

// move takes the watch from share old to the member's current share: DELETED for the
// objects of lost ranges, a list of the new share at exactly f.rv with ADDED for the
// objects not delivered yet, and a watch of the new share from f.rv.
func (f *filteredWatcher[T]) move(ctx context.Context, old share[T]) (share[T], bool) {
	if f.rv == "" || f.rv == "0" {
		return old, false // no exact point to list at
	}
	if _, ok := bookmark[T](f.rv); !ok {
		return old, false // no way to bring the reflector back to f.rv afterwards
	}
	f.inner.Stop()
	sh := f.lw.current()
	var added []T
	opts := apiclient.ListOptions{
		LabelSelector: f.opts.LabelSelector, FieldSelector: f.opts.FieldSelector,
		ResourceVersion: f.rv, ResourceVersionMatch: apiclient.ResourceVersionMatchExact, Limit: 500,
	}
	for {
		l, err := f.lw.list(ctx, opts, sh)
		if err != nil {
			return old, false
		}
		f.lw.mu.Lock()
		for _, o := range l.Items {
			if _, ok := f.lw.known[key(o)]; !ok {
				added = append(added, o)
			}
		}
		f.lw.mu.Unlock()
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	w, err := f.lw.watch(ctx, apiclient.ListOptions{
		LabelSelector: f.opts.LabelSelector, FieldSelector: f.opts.FieldSelector,
		ResourceVersion: f.rv, AllowWatchBookmarks: f.opts.AllowWatchBookmarks, TimeoutSeconds: f.opts.TimeoutSeconds,
	}, sh)
	if err != nil {
		return old, false
	}
	f.inner = w
	// The objects in known are the ones handed to the informer, whose transform writes to
	// the last of them while it handles that event. A bookmark at f.rv (no change to the
	// reflector) is received only once that is done: after it, they are read safely.
	if b, ok := bookmark[T](f.rv); ok && !f.send(ctx, apiclient.Event[T]{Type: apiclient.Bookmark, Object: b}) {
		return sh, true // the caller sees ctx done next
	}
	// Lost objects leave the store, gained ones enter it, all at f.rv.
	f.lw.mu.Lock()
	var lost []T
	for k, o := range f.lw.known {
		if !sh.match(o) {
			lost = append(lost, o)
			delete(f.lw.known, k)
		}
	}
	for _, o := range added {
		f.lw.known[key(o)] = o
	}
	f.lw.mu.Unlock()
	for _, o := range lost {
		// o is the cache's object: the informer's transform writes to what it is given,
		// so it gets a copy.
		if !f.send(ctx, apiclient.Event[T]{Type: apiclient.Deleted, Object: deepcopy.Copy(o)}) {
			return sh, true // the caller sees ctx done next
		}
	}
	for _, o := range added {
		if !f.send(ctx, apiclient.Event[T]{Type: apiclient.Added, Object: o}) {
			return sh, true
		}
	}
	// These events carry their objects' older resourceVersions; a bookmark brings the
	// reflector's resourceVersion back to f.rv, where the new watch starts.
	if b, ok := bookmark[T](f.rv); ok {
		f.send(ctx, apiclient.Event[T]{Type: apiclient.Bookmark, Object: b})
	}
	return sh, true
}

// bookmark returns a new T whose resourceVersion is rv, if T is a pointer to a struct with
// an ObjectMeta (meta.MetaObject).
func bookmark[T meta.Object](rv string) (T, bool) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return zero, false
	}
	o, ok := reflect.New(t.Elem()).Interface().(T)
	if !ok {
		return zero, false
	}
	m, ok := any(o).(meta.MetaObject)
	if !ok {
		return zero, false
	}
	m.GetObjectMeta().ResourceVersion = rv
	return o, true
}

// WithDecodeOptions passes an informer's decoding options (skip managedFields, share strings)
// to base when base can take them (apiclient.DecodeTunable), so sharding costs nothing there.
func (s *shardedLW[T]) WithDecodeOptions(opts apiclient.DecodeOptions) apiclient.ListerWatcher[T] {
	t, ok := s.base.(apiclient.DecodeTunable[T])
	if !ok {
		return s
	}
	return &shardedLW[T]{base: t.WithDecodeOptions(opts), share: s.share, opts: s.opts, known: map[string]T{}, support: s.support}
}

var _ apiclient.DecodeTunable[*meta.ObjectMeta] = (*shardedLW[*meta.ObjectMeta])(nil)
