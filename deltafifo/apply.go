package deltafifo

import (
	"github.com/informerkit/informerkit/indexer"
)

// ReplaceStore is what ApplyReplacedAll needs from the consumer's store. An
// indexer.Indexer[T] satisfies it.
type ReplaceStore[T any] interface {
	KnownObjects[T]
	Replace(list []T, resourceVersion string) error
}

// ApplyReplacedAll applies the payload of a ReplacedAll delta to the consumer's store in one
// step, and reports the per-object changes it implies — what modes Coalescing and InOrder
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
func ApplyReplacedAll[T any](store ReplaceStore[T], keyFunc indexer.KeyFunc[T], info *ReplacedAllInfo[T], notify func(d Delta[T], old T, existed bool)) error {
	if ix, ok := store.(diffReplacer[T]); ok {
		return ix.ReplaceAndDiff(info.Objects, info.ResourceVersion, func(c indexer.Change[T]) {
			if c.Deleted {
				notify(Delta[T]{Type: Deleted, Object: c.Old, FinalStateUnknown: true}, c.Old, true)
				return
			}
			notify(Delta[T]{Type: Replaced, Object: c.New}, c.Old, c.Existed)
		})
	}
	return applyReplacedAllSlowly(store, keyFunc, info, notify)
}

// diffReplacer is implemented by indexer.Indexer.
type diffReplacer[T any] interface {
	ReplaceAndDiff(list []T, resourceVersion string, fn func(indexer.Change[T])) error
}

func applyReplacedAllSlowly[T any](store ReplaceStore[T], keyFunc indexer.KeyFunc[T], info *ReplacedAllInfo[T], notify func(d Delta[T], old T, existed bool)) error {
	type change struct {
		obj, old T
		existed  bool
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
	var deleted []T
	for _, k := range store.ListKeys() {
		if _, ok := listed[k]; !ok {
			obj, _, _ := store.GetByKey(k)
			deleted = append(deleted, obj)
		}
	}
	changes := make([]change, 0, len(keys))
	seen := make(map[string]T, len(keys))
	for i, obj := range info.Objects {
		c := change{obj: obj}
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
	for _, obj := range deleted {
		notify(Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true}, obj, true)
	}
	for _, c := range changes {
		notify(Delta[T]{Type: Replaced, Object: c.obj}, c.old, c.existed)
	}
	return nil
}
