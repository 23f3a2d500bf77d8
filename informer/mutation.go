package informer

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/deepcopy"
	"github.com/informerkit/informerkit/indexer"
)

// The cache mutation detector. Objects in an informer's cache are shared: handlers and
// listers get the cached pointers, and structural sharing makes equal maps, slices and
// strings of different objects one value. Code that changes a cached object (a handler that
// edits the labels it was given, a reconciler that edits a lister's result) silently
// corrupts the cache and every object sharing the changed value. With the detector on, the
// cache keeps a deep copy of every object it stores and compares the object with it when the
// object is replaced or deleted, every CacheMutationCheckInterval, and when the informer
// stops; a difference is reported with the object's key and the path of the changed field.

// EnvCacheMutationDetector turns the detector on for every informer when set to "true", as
// client-go's KUBE_CACHE_MUTATION_DETECTOR does. The project's tests set it.
const EnvCacheMutationDetector = "INFORMERKIT_CACHE_MUTATION_DETECTOR"

// CacheMutationCheckInterval is the period of the detector's sweep over the whole cache.
const CacheMutationCheckInterval = time.Second

// CacheMutationError reports a cached object that changed after it was cached.
type CacheMutationError struct {
	// Informer names the informer, Key the object ("namespace/name").
	Informer, Key string
	// Path is the first changed field, e.g. `metadata.labels["app"]` or
	// `spec.containers[0].image`.
	Path string
	// Cached and Now show the field's value when cached and now.
	Cached, Now string
}

// Error says which object and field changed.
func (e *CacheMutationError) Error() string {
	return fmt.Sprintf("informer %s: cached object %s was changed after it was cached: %s was %s, is %s (cached objects are shared: deep-copy them before changing them)",
		e.Informer, e.Key, e.Path, e.Cached, e.Now)
}

// detectorFromEnv reports whether EnvCacheMutationDetector asks for the detector.
func detectorFromEnv() bool {
	v, _ := strconv.ParseBool(os.Getenv(EnvCacheMutationDetector))
	return v
}

// mutationDetector wraps the cache: every write records a deep copy of what it stores and
// checks what it replaces or deletes against the copy taken when it was stored. mu is held
// across each write and its bookkeeping, so that a sweep never compares an object with the
// copy of another version.
type mutationDetector[T any] struct {
	indexer.Indexer[T]
	name    string
	keyFunc indexer.KeyFunc[T]
	report  func(*CacheMutationError)

	mu     sync.Mutex
	copies map[string]T
	found  atomic.Uint64
}

// withMutationDetector returns cache, wrapped in a detector if opts or the environment ask
// for one.
func withMutationDetector[T any](cache indexer.Indexer[T], name string, keyFunc indexer.KeyFunc[T], on bool, handler func(*CacheMutationError), logger *slog.Logger) indexer.Indexer[T] {
	if !on && !detectorFromEnv() {
		return cache
	}
	d := &mutationDetector[T]{Indexer: cache, name: name, keyFunc: keyFunc, copies: map[string]T{}}
	d.report = handler
	if d.report == nil {
		d.report = func(err *CacheMutationError) {
			if testing.Testing() {
				panic(err)
			}
			logger.Error("cache mutation detected", "informer", err.Informer, "key", err.Key, "path", err.Path, "err", err)
		}
	}
	return d
}

// checkLocked compares obj, stored under key, with its copy; d.mu held.
func (d *mutationDetector[T]) checkLocked(key string, obj T) {
	cp, ok := d.copies[key]
	if !ok {
		return
	}
	if path, was, now, differ := firstDifference(reflect.ValueOf(&cp).Elem(), reflect.ValueOf(&obj).Elem(), ""); differ {
		d.found.Add(1)
		// Report once per change: the copy follows the object.
		d.copies[key] = deepcopy.Copy(obj)
		d.report(&CacheMutationError{Informer: d.name, Key: key, Path: strings.TrimPrefix(path, "."), Cached: was, Now: now})
	}
}

func (d *mutationDetector[T]) recordLocked(key string, obj T) { d.copies[key] = deepcopy.Copy(obj) }

// Add, Update, Upsert, Delete, DeleteByKey, Replace and ReplaceAndDiff are the cache's,
// with the detector's bookkeeping.

func (d *mutationDetector[T]) Add(obj T) error    { _, _, err := d.Upsert(obj); return err }
func (d *mutationDetector[T]) Update(obj T) error { _, _, err := d.Upsert(obj); return err }

func (d *mutationDetector[T]) Upsert(obj T) (T, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, existed, err := d.Indexer.Upsert(obj)
	if err != nil {
		return old, existed, err
	}
	key, _ := d.keyFunc(obj) // Upsert succeeded, so the key function did
	if existed {
		d.checkLocked(key, old)
	}
	d.recordLocked(key, obj)
	return old, existed, nil
}

func (d *mutationDetector[T]) Delete(obj T) error {
	key, err := d.keyFunc(obj)
	if err != nil {
		return d.Indexer.Delete(obj)
	}
	d.DeleteByKey(key)
	return nil
}

func (d *mutationDetector[T]) DeleteByKey(key string) (T, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, existed := d.Indexer.DeleteByKey(key)
	if existed {
		d.checkLocked(key, old)
	}
	delete(d.copies, key)
	return old, existed
}

func (d *mutationDetector[T]) Replace(list []T, resourceVersion string) error {
	return d.ReplaceAndDiff(list, resourceVersion, func(indexer.Change[T]) {})
}

// ReplaceAndDiff records every change before fn hears of any: fn hands changes to handlers,
// and a handler that changes a value the next listed object shares must not have that
// object recorded with the change.
func (d *mutationDetector[T]) ReplaceAndDiff(list []T, resourceVersion string, fn func(indexer.Change[T])) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var changes []indexer.Change[T]
	if err := d.Indexer.ReplaceAndDiff(list, resourceVersion, func(c indexer.Change[T]) {
		changes = append(changes, c)
	}); err != nil {
		return err
	}
	for _, c := range changes {
		if c.Existed || c.Deleted {
			d.checkLocked(c.Key, c.Old)
		}
		if c.Deleted {
			delete(d.copies, c.Key)
		} else {
			d.recordLocked(c.Key, c.New)
		}
	}
	for _, c := range changes {
		fn(c)
	}
	return nil
}

// sweep compares every cached object with its copy.
func (d *mutationDetector[T]) sweep() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Indexer.Range(func(key string, obj T) bool {
		d.checkLocked(key, obj)
		return true
	})
}

// runMutationDetector sweeps cache every interval (CacheMutationCheckInterval if 0, never if
// negative) until ctx is done, if it is a detector.
func runMutationDetector[T any](ctx context.Context, cache indexer.Indexer[T], interval time.Duration) {
	d, ok := cache.(*mutationDetector[T])
	if !ok || interval < 0 {
		return
	}
	if interval <= 0 {
		interval = CacheMutationCheckInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.sweep()
		}
	}
}

// finalMutationCheck sweeps cache once, if it is a detector (when the informer stops).
func finalMutationCheck[T any](cache indexer.Indexer[T]) {
	if d, ok := cache.(*mutationDetector[T]); ok {
		d.sweep()
	}
}

// cacheMutations returns the number of mutations the detector found (0 without one).
func cacheMutations[T any](cache indexer.Indexer[T]) uint64 {
	if d, ok := cache.(*mutationDetector[T]); ok {
		return d.found.Load()
	}
	return 0
}

var timeType = reflect.TypeFor[time.Time]()

// firstDifference walks a (the copy) and b (the cached object) in parallel and returns the
// path of the first difference with both values shown. Field names are the JSON names
// where the struct tag gives one; embedded structs without a name add no path element.
// Unexported fields are compared too: they are part of the cached value.
func firstDifference(a, b reflect.Value, path string) (string, string, string, bool) {
	if a.Kind() != b.Kind() {
		return path, show(a), show(b), true
	}
	if a.Type() == timeType {
		// Compare the instant and the location pointer, not the location's contents.
		if a.Field(0).Uint() != b.Field(0).Uint() || a.Field(1).Int() != b.Field(1).Int() || a.Field(2).Pointer() != b.Field(2).Pointer() {
			return path, show(a), show(b), true
		}
		return "", "", "", false
	}
	switch a.Kind() {
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return path, show(a), show(b), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return path, show(a), show(b), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return path, show(a), show(b), true
		}
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return path, show(a), show(b), true
		}
	case reflect.Complex64, reflect.Complex128:
		if a.Complex() != b.Complex() {
			return path, show(a), show(b), true
		}
	case reflect.String:
		if a.String() != b.String() {
			return path, show(a), show(b), true
		}
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path, show(a), show(b), true
			}
			return "", "", "", false
		}
		if a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type() {
			return path, show(a), show(b), true
		}
		return firstDifference(a.Elem(), b.Elem(), path)
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() {
			return path, show(a), show(b), true
		}
		if a.Len() != b.Len() {
			return path, show(a), show(b), true
		}
		for i := range a.Len() {
			if p, x, y, ok := firstDifference(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]"); ok {
				return p, x, y, true
			}
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path, show(a), show(b), true
		}
		it := a.MapRange()
		for it.Next() {
			p := fmt.Sprintf("%s[%q]", path, fmt.Sprint(showKey(it.Key())))
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() {
				return p, show(it.Value()), "absent", true
			}
			if p, x, y, ok := firstDifference(it.Value(), bv, p); ok {
				return p, x, y, true
			}
		}
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			p := path
			if name := fieldName(f); name != "" {
				p += "." + name
			}
			if p, x, y, ok := firstDifference(a.Field(i), b.Field(i), p); ok {
				return p, x, y, true
			}
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if a.Pointer() != b.Pointer() {
			return path, "a " + a.Kind().String(), "another", true
		}
	}
	return "", "", "", false
}

// fieldName is the JSON name of f, its Go name if it has none, or "" for an embedded struct
// without a JSON name (its fields are promoted).
func fieldName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	switch {
	case name == "-":
		return f.Name
	case name != "":
		return name
	case f.Anonymous:
		return ""
	}
	return f.Name
}

func showKey(k reflect.Value) any {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return show(k)
}

// show formats a value for the report, briefly.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "absent"
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return "nil"
		}
	case reflect.String:
		return strconv.Quote(truncate(v.String(), 80))
	}
	if v.Kind() == reflect.Map || v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		return fmt.Sprintf("%s of length %d", v.Type(), v.Len())
	}
	if v.CanInterface() {
		return truncate(fmt.Sprint(v.Interface()), 80)
	}
	return "a " + v.Type().String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
