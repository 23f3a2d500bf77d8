package informer

import (
	"context"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/listwatch"
)

// ErrShardConflict is wrapped by the errors of Factory.Shard: the resource already has
// informers that are not sharded (created before Shard), or it is sharded otherwise.
var ErrShardConflict = errors.New("informer: the resource is already set up otherwise")

// shardSpec is how a factory shards one resource.
type shardSpec struct {
	share listwatch.Share
	opts  listwatch.Options
}

func (s shardSpec) normal() shardSpec {
	if s.opts.Field == "" {
		s.opts.Field = sharding.FieldUID
	}
	return s
}

// describe is what the informer's name says of the sharding.
func (s shardSpec) describe() string {
	if s.opts.ByOwner {
		return "sharded by owner"
	}
	if s.opts.Field == sharding.FieldNamespace {
		return "sharded by namespace"
	}
	return "sharded by uid"
}

// Shard makes the factory's informers of gvr (whatever their type, namespace or selectors)
// list and watch only the objects whose hash share holds, through listwatch.New with opts:
// the cache of each is about 1/N of the collection, and it follows share as it moves. Every
// reader of those informers (listers, handlers, a controller client reading through the
// factory) sees only the share.
//
// Call it before the first informer of gvr is created. It fails with an error wrapping
// ErrShardConflict if the factory already holds an informer of gvr (unsharded), or if gvr is
// sharded with another share or other options; sharding it again the same way is a no-op.
// A type that cannot be filtered as opts ask (see listwatch.New) gets an informer whose
// lists fail with the reason: check it first with listwatch.Check.
func (f *Factory) Shard(gvr meta.GroupVersionResource, share listwatch.Share, opts listwatch.Options) error {
	if share == nil {
		panic("informer: Factory.Shard: nil Share")
	}
	spec := shardSpec{share: share, opts: opts}.normal()
	if err := spec.opts.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.shards[gvr]; ok {
		if cur != spec {
			return fmt.Errorf("%w: %s is already %s with another share or options", ErrShardConflict, gvr, cur.describe())
		}
		return nil
	}
	for _, key := range f.order {
		if key.gvr == gvr {
			return fmt.Errorf("%w: %s already has an informer that is not sharded (%s)", ErrShardConflict, gvr, key.name())
		}
	}
	if f.shards == nil {
		f.shards = map[meta.GroupVersionResource]shardSpec{}
	}
	f.shards[gvr] = spec
	return nil
}

// Sharded reports how the factory shards gvr (ok false when it does not).
func (f *Factory) Sharded(gvr meta.GroupVersionResource) (share listwatch.Share, opts listwatch.Options, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.shards[gvr]
	return s.share, s.opts, ok
}

// shardedLWLocked wraps lw as the factory shards gvr, if it does. f.mu held.
func shardedLWLocked[T meta.Object](f *Factory, gvr meta.GroupVersionResource, lw apiclient.ListerWatcher[T]) (apiclient.ListerWatcher[T], shardSpec, bool) {
	spec, ok := f.shards[gvr]
	if !ok {
		return lw, spec, false
	}
	slw, err := listwatch.New(lw, spec.share, spec.opts)
	if err != nil {
		return failingLW[T]{err: err}, spec, true
	}
	return slw, spec, true
}

// failingLW fails every request with err: the informer of a type that cannot be sharded as
// asked reports why on every list, and never syncs.
type failingLW[T any] struct{ err error }

func (f failingLW[T]) List(context.Context, apiclient.ListOptions) (*meta.List[T], error) {
	return nil, f.err
}

func (f failingLW[T]) Watch(context.Context, apiclient.ListOptions) (apiclient.Watcher[T], error) {
	return nil, f.err
}
