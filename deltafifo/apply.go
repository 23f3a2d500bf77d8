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
//  1. It computes the key of every listed object (a failure returns the error, nothing
//     changed) and, for each key, looks up the store's current object.
//  2. It calls store.Replace(info.Objects, info.ResourceVersion). An error (e.g. an index
//     function failing) is returned with nothing notified; the store is unchanged if it is an
//     indexer.Indexer, so the process function can return Requeue(err).
//  3. Then it calls notify, first for every key the store had that the list lacks, with a
//     tombstone (Deleted, FinalStateUnknown, Object = the store's object), then for every
//     listed key in list order (the last of duplicates) with a Replaced delta and the object
//     the store held before (existed false if none).
//
// An informer maps the notifications to handlers: a tombstone to OnDelete, Replaced with
// existed to OnUpdate(old, new), Replaced without to OnAdd(new, isInInitialList).
//
// The consumer recognises the delta by d.Type == ReplacedAll (d.All is then non-nil) and calls
// ApplyReplacedAll(store, keyFunc, d.All, notify) for it. The matching SyncAll delta
// (d.Type == SyncAll, no payload) means "resync": call OnUpdate(obj, obj) for every object of
// the store.
func ApplyReplacedAll[T any](store ReplaceStore[T], keyFunc indexer.KeyFunc[T], info *ReplacedAllInfo[T], notify func(d Delta[T], old T, existed bool)) error {
	type change struct {
		obj, old T
		existed  bool
	}
	last := make(map[string]int, len(info.Objects))
	keys := make([]string, len(info.Objects))
	for i, obj := range info.Objects {
		key, err := keyFunc(obj)
		if err != nil {
			return &indexer.KeyError{Obj: obj, Err: err}
		}
		keys[i] = key
		last[key] = i
	}
	var deleted []T
	for _, k := range store.ListKeys() {
		if _, listed := last[k]; listed {
			continue
		}
		obj, _, _ := store.GetByKey(k)
		deleted = append(deleted, obj)
	}
	changes := make([]change, 0, len(last))
	for i, obj := range info.Objects {
		if last[keys[i]] != i {
			continue
		}
		old, existed, _ := store.GetByKey(keys[i])
		changes = append(changes, change{obj: obj, old: old, existed: existed})
	}
	if err := store.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	var zero T
	for _, obj := range deleted {
		notify(Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true}, obj, true)
	}
	for _, c := range changes {
		if c.existed {
			notify(Delta[T]{Type: Replaced, Object: c.obj}, c.old, true)
		} else {
			notify(Delta[T]{Type: Replaced, Object: c.obj}, zero, false)
		}
	}
	return nil
}
