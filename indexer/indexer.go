package indexer

import (
	"errors"
	"fmt"
)

// KeyFunc computes the key under which an object is stored. It must be deterministic.
type KeyFunc[T any] func(obj T) (string, error)

// IndexFunc computes the indexed values of an object for one index. It must be deterministic
// and must not modify the returned slice afterwards: the store keeps it to know, on the next
// update or delete, which index entries to remove.
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers maps index names to index functions.
type Indexers[T any] map[string]IndexFunc[T]

// Indexer is a thread-safe store of objects of type T with named secondary indexes.
//
// Every method may be called from any goroutine. Objects are shared, not copied: callers must
// not modify an object after storing it or after reading it back.
type Indexer[T any] interface {
	// Add stores obj under its key, replacing any object stored under that key.
	Add(obj T) error
	// Update is the same as Add: it stores obj under its key whether or not the key exists.
	Update(obj T) error
	// Delete removes the object stored under obj's key. Deleting an absent key is not an error.
	Delete(obj T) error
	// List returns every stored object, in no particular order, in a new slice.
	List() []T
	// ListKeys returns every key, in no particular order, in a new slice.
	ListKeys() []string
	// Get returns the object stored under obj's key.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key. The error is always nil; it is there for
	// interface compatibility with stores that can fail.
	GetByKey(key string) (item T, exists bool, err error)
	// Replace makes list the whole content (a later duplicate key wins) and remembers
	// resourceVersion (see LastSyncResourceVersion), atomically for readers. It merges rather
	// than rebuilds: a listed key that is stored is updated in place, with index work only
	// where its values changed, so a relist of an unchanged collection costs little more
	// than computing the keys and index values, and memory is not doubled. The store keeps
	// the objects, not the slice. If a key or index function fails nothing changes.
	Replace(list []T, resourceVersion string) error
	// ReplaceAndDiff is Replace that also reports what it did, after releasing the lock:
	// first one Change with Deleted for every stored key the list lacks, then one Change per
	// listed object, in list order, with the object it replaced (Existed) if any. A key listed
	// twice is reported twice, the second time replacing the first.
	ReplaceAndDiff(list []T, resourceVersion string, fn func(Change[T])) error
	// Resync does nothing; it exists so that an Indexer satisfies the reflector's store
	// interface.
	Resync() error
	// Index returns the stored objects whose values for the named index intersect the
	// values of obj (computed with the same index function).
	Index(indexName string, obj T) ([]T, error)
	// IndexKeys returns the keys of the objects whose values for the named index include
	// indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value present in the named index (none for an
	// unknown index).
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the objects whose values for the named index include indexedValue.
	ByIndex(indexName, indexedValue string) ([]T, error)
	// GetIndexers returns a copy of the registered index functions.
	GetIndexers() Indexers[T]
	// AddIndexers registers more indexes and indexes the objects already stored with them.
	// A name already registered is an error ([ErrDuplicateIndex]); so is an index function
	// failing on a stored object ([*IndexError]). On error nothing changes.
	AddIndexers(newIndexers Indexers[T]) error

	// Upsert stores obj like Add and returns the object it replaced, if any, in the same
	// critical section: what an informer needs to decide between OnAdd and OnUpdate without a
	// second key computation and lookup.
	Upsert(obj T) (old T, existed bool, err error)
	// DeleteByKey removes the object stored under key and returns it. It needs no object, so
	// it suits tombstones whose last state is unknown.
	DeleteByKey(key string) (old T, existed bool)
	// Range calls fn for every stored object, in no particular order, until fn returns false.
	// It allocates nothing. fn runs under the store's read lock: it must not write to this
	// store, and should be quick.
	Range(fn func(key string, obj T) bool)
	// RangeByIndex calls fn for every object whose values for the named index include
	// indexedValue, until fn returns false; like Range it allocates nothing and runs under the
	// read lock. The error reports an unknown index.
	RangeByIndex(indexName, indexedValue string, fn func(key string, obj T) bool) error
	// Len returns the number of stored objects.
	Len() int
	// LastSyncResourceVersion returns the resourceVersion given to the last Replace.
	LastSyncResourceVersion() string
}

// Change is one difference ReplaceAndDiff made to the store.
type Change[T any] struct {
	Key string
	// Old is the object stored under Key before the change, if Existed.
	Old     T
	Existed bool
	// New is the listed object; the zero value when Deleted.
	New T
	// Deleted reports that Key was stored and is not in the list.
	Deleted bool
}

// ErrNoSuchIndex is wrapped by the errors of lookups that name an unregistered index.
var ErrNoSuchIndex = errors.New("indexer: no such index")

// ErrDuplicateIndex is wrapped by the error of AddIndexers when a name is already registered.
var ErrDuplicateIndex = errors.New("indexer: index already registered")

// KeyError reports that the key function failed for an object.
type KeyError struct {
	Obj any
	Err error
}

// Error implements error.
func (e *KeyError) Error() string {
	return fmt.Sprintf("indexer: cannot compute the key of %T: %v", e.Obj, e.Err)
}

// Unwrap returns the key function's error.
func (e *KeyError) Unwrap() error { return e.Err }

// IndexError reports that an index function failed for the object stored (or about to be
// stored) under Key. The store is unchanged when a write returns it.
type IndexError struct {
	Index string
	Key   string
	Err   error
}

// Error implements error.
func (e *IndexError) Error() string {
	return fmt.Sprintf("indexer: index function %q failed for key %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap returns the index function's error.
func (e *IndexError) Unwrap() error { return e.Err }
