package deltafifo

import (
	"errors"

	"github.com/informerkit/informerkit/indexer"
)

// The consumer's side of the relist deltas, as package informer applies them to its cache
// (informer/deltas.go, replace.go): the tests apply what the FIFO hands out with these and
// check the result. Each notify call is what a handler hears: a Deleted tombstone, or a
// Replaced object with the one it replaced (existed false for a new key).

func applyReplacedAll(store indexer.Indexer[*testObj], info *ReplacedAllInfo[*testObj], notify func(key string, d Delta[*testObj], old *testObj, existed bool)) error {
	return store.ReplaceAndDiff(info.Objects, info.ResourceVersion, func(c indexer.Change[*testObj]) {
		if c.Deleted {
			notify(c.Key, Delta[*testObj]{Type: Deleted, Object: c.Old, FinalStateUnknown: true}, c.Old, true)
			return
		}
		notify(c.Key, Delta[*testObj]{Type: Replaced, Object: c.New}, c.Old, c.Existed)
	})
}

func applyReplacedChunk(store indexer.Indexer[*testObj], info *ReplacedChunkInfo[*testObj], notify func(key string, d Delta[*testObj], old *testObj, existed bool)) error {
	var errs []error
	for i, obj := range info.Objects {
		old, existed, err := store.Upsert(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		notify(info.Keys[i], Delta[*testObj]{Type: Replaced, Object: obj}, old, existed)
	}
	return errors.Join(errs...)
}

func applyReplacedEnd(store indexer.Indexer[*testObj], info *ReplacedEndInfo, notify func(key string, d Delta[*testObj], old *testObj, existed bool)) {
	var gone []string
	store.Range(func(key string, _ *testObj) bool {
		if _, ok := info.Keys[key]; !ok {
			gone = append(gone, key)
		}
		return true
	})
	for _, k := range gone {
		if old, ok := store.DeleteByKey(k); ok {
			notify(k, Delta[*testObj]{Type: Deleted, Object: old, FinalStateUnknown: true}, old, true)
		}
	}
}
