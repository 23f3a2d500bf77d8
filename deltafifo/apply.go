package deltafifo

import (
	"errors"

	"github.com/informerkit/informerkit/indexer"
)

// ReplaceStore is what ApplyReplacedAll needs from the consumer's store. An
// indexer.Indexer[T] satisfies it.
type ReplaceStore[T any] interface {
	KnownObjects[T]
	Replace(list []T, resourceVersion string) error
}

// ApplyReplacedAll applies the payload of a ReplacedAll delta to the consumer's store in one
// step, and reports the per-object changes it implies — what a FIFO or a RealFIFO
// would have queued as separate deltas:
//
//  1. It replaces the store's content with info.Objects at info.ResourceVersion. If that fails
//     (a key or index function failing) it returns the error with nothing notified; an
//     indexer.Indexer is then unchanged, so the process function can return Requeue(err).
//  2. Then it calls notify, first for every key the store had that the list lacks, with a
//     tombstone (Deleted, FinalStateUnknown, Object = the store's object; old is the same
//     object and existed is true), then for every listed object in list order with a
//     Replaced delta and the object the store held under that key before (existed false if
//     none). A key listed twice is reported twice, the second time with the first as old.
//     Every call carries the object's key, already computed: the consumer need not compute
//     it again.
//
// An informer maps the notifications to handlers: a tombstone to OnDelete, Replaced with
// existed to OnUpdate(old, new), Replaced without to OnAdd(new, isInInitialList).
//
// For an indexer.Indexer the work is done by its ReplaceAndDiff: one merge under one write
// lock, which updates unchanged keys in place and computes each key once. Other stores are
// read (ListKeys, GetByKey) and then given Replace; keyFunc, which must be the store's key
// function, is only used for them.
//
// The consumer recognises the delta by d.Type == ReplacedAll (d.All is then non-nil) and calls
// ApplyReplacedAll(store, keyFunc, d.All, notify) for it. The matching SyncAll delta
// (d.Type == SyncAll, no payload) means "resync": call OnUpdate(obj, obj) for every object of
// the store.
func ApplyReplacedAll[T any](store ReplaceStore[T], keyFunc indexer.KeyFunc[T], info *ReplacedAllInfo[T], notify func(key string, d Delta[T], old T, existed bool)) error {
	if ix, ok := store.(diffReplacer[T]); ok {
		return ix.ReplaceAndDiff(info.Objects, info.ResourceVersion, func(c indexer.Change[T]) {
			if c.Deleted {
				notify(c.Key, Delta[T]{Type: Deleted, Object: c.Old, FinalStateUnknown: true}, c.Old, true)
				return
			}
			notify(c.Key, Delta[T]{Type: Replaced, Object: c.New}, c.Old, c.Existed)
		})
	}
	return applyReplacedAllSlowly(store, keyFunc, info, notify)
}

// diffReplacer is implemented by indexer.Indexer.
type diffReplacer[T any] interface {
	ReplaceAndDiff(list []T, resourceVersion string, fn func(indexer.Change[T])) error
}

func applyReplacedAllSlowly[T any](store ReplaceStore[T], keyFunc indexer.KeyFunc[T], info *ReplacedAllInfo[T], notify func(key string, d Delta[T], old T, existed bool)) error {
	type change struct {
		key      string
		obj, old T
		existed  bool
	}
	type deletion struct {
		key string
		obj T
	}
	keys := make([]string, len(info.Objects))
	listed := make(map[string]struct{}, len(info.Objects))
	for i, obj := range info.Objects {
		key, err := keyFunc(obj)
		if err != nil {
			return &indexer.KeyError{Obj: obj, Err: err}
		}
		keys[i] = key
		listed[key] = struct{}{}
	}
	var deleted []deletion
	for _, k := range store.ListKeys() {
		if _, ok := listed[k]; !ok {
			obj, _, _ := store.GetByKey(k)
			deleted = append(deleted, deletion{k, obj})
		}
	}
	changes := make([]change, 0, len(keys))
	seen := make(map[string]T, len(keys))
	for i, obj := range info.Objects {
		c := change{key: keys[i], obj: obj}
		if prev, ok := seen[keys[i]]; ok {
			c.old, c.existed = prev, true
		} else {
			c.old, c.existed, _ = store.GetByKey(keys[i])
		}
		seen[keys[i]] = obj
		changes = append(changes, c)
	}
	if err := store.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, d := range deleted {
		notify(d.key, Delta[T]{Type: Deleted, Object: d.obj, FinalStateUnknown: true}, d.obj, true)
	}
	for _, c := range changes {
		notify(c.key, Delta[T]{Type: Replaced, Object: c.obj}, c.old, c.existed)
	}
	return nil
}

// IncrementalStore is what ApplyReplacedChunk and ApplyReplacedEnd need from the consumer's
// store. An indexer.Indexer[T] satisfies it.
type IncrementalStore[T any] interface {
	// Upsert stores obj under its key and returns the object it replaced, if any.
	Upsert(obj T) (old T, existed bool, err error)
	// DeleteByKey removes the object stored under key and returns it.
	DeleteByKey(key string) (old T, existed bool)
	// Range calls fn for every stored object until fn returns false; fn must not write to
	// the store.
	Range(fn func(key string, obj T) bool)
}

// ApplyReplacedChunk applies the payload of a ReplacedChunk delta (part of an incremental
// relist, AtomicFIFO) to the consumer's store: it stores every object, in order, replacing
// what the store held under its key, and then calls notify with the object's key (from
// info.Keys: not computed again), a Replaced delta, and the object it replaced (existed false
// if the key was new). Nothing is deleted: deletions come with the ReplacedEnd delta.
//
// An object the store refuses (its index function failing) is skipped, not notified, and
// reported in the returned error, which joins all such errors; the others are applied. The
// store keeps its previous object for a skipped key, as when an Update is refused.
func ApplyReplacedChunk[T any](store IncrementalStore[T], info *ReplacedChunkInfo[T], notify func(key string, d Delta[T], old T, existed bool)) error {
	var errs []error
	for i, obj := range info.Objects {
		old, existed, err := store.Upsert(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		notify(info.Keys[i], Delta[T]{Type: Replaced, Object: obj}, old, existed)
	}
	return errors.Join(errs...)
}

// ApplyReplacedEnd applies the payload of a ReplacedEnd delta (the end of an incremental
// relist, AtomicFIFO): it deletes every object of the store whose key is not in info.Keys
// (the keys the relist had) and calls notify for each with a tombstone (Deleted,
// FinalStateUnknown, Object = the store's object; old is the same object, existed true).
// With the ReplacedChunk deltas before it, the store now holds exactly what
// ApplyReplacedAll of the whole list would have left, and the consumer was told the same
// changes.
//
// The store must not be written concurrently (the consumer is its only writer). Only the
// keys to delete are collected, never the list. The store's own resourceVersion (an
// indexer.Indexer's LastSyncResourceVersion, which only Replace sets) is not changed;
// info.ResourceVersion is the list's.
func ApplyReplacedEnd[T any](store IncrementalStore[T], info *ReplacedEndInfo, notify func(key string, d Delta[T], old T, existed bool)) {
	var gone []string
	store.Range(func(key string, _ T) bool {
		if _, ok := info.Keys[key]; !ok {
			gone = append(gone, key)
		}
		return true
	})
	for _, k := range gone {
		if old, ok := store.DeleteByKey(k); ok {
			notify(k, Delta[T]{Type: Deleted, Object: old, FinalStateUnknown: true}, old, true)
		}
	}
}
