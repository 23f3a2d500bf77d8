package client

import (
	"strconv"
	"sync"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// writes remembers, per object, the client's last write that its informer's cache may not
// show yet: read-your-writes. An entry leaves once the cache shows the write.
//
// A write at resourceVersion w of key k is shown once the cache holds k at w or newer, or
// once the cache has applied an event or list at w or newer: every event up to w has then
// been applied, so whatever the cache holds for k (possibly nothing, if someone deleted it
// since) is at least as new as the write. A delete is shown once the cache no longer holds
// the deleted object (absent, another uid, or marked for deletion).
//
// Writes made before T has an informer are summed up by floor, the newest resourceVersion
// written: the informer a later read starts shows all of them once it has applied floor (its
// first list may come from the API server's watch cache, older than the writes).
type writes[T meta.Object] struct {
	mu      sync.Mutex
	pending map[string]pendingWrite
	floor   uint64
}

// maxPending bounds the entries of a type without an informer (deletes: writes only raise
// the floor). Past it they are forgotten: such a program writes without reading.
const maxPending = 4096

type pendingWrite struct {
	rv      uint64 // the write's resourceVersion; 0 for a delete
	rvText  string
	deleted bool
	uid     string // of the deleted object, if known
}

func newWrites[T meta.Object]() *writes[T] {
	return &writes[T]{pending: map[string]pendingWrite{}}
}

// wrote records a write of key that produced resourceVersion rv. A resourceVersion that is
// not a decimal integer cannot be compared and is not tracked.
func (w *writes[T]) wrote(inf *informer.Informer[T], key, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if inf == nil {
		w.floor = max(w.floor, n)
		delete(w.pending, key)
		return
	}
	if p, ok := w.pending[key]; ok && !p.deleted && p.rv >= n {
		return
	}
	w.pending[key] = pendingWrite{rv: n, rvText: rv}
	w.pruneLocked(inf)
}

// deleted records a delete of key (of the object with uid, if known).
func (w *writes[T]) deleted(inf *informer.Informer[T], key, uid string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if inf == nil && len(w.pending) >= maxPending {
		clear(w.pending)
	}
	w.pending[key] = pendingWrite{deleted: true, uid: uid}
	w.pruneLocked(inf)
}

// pruneLocked drops the entries the cache shows already, once there are many, so that
// writes never read back do not accumulate.
func (w *writes[T]) pruneLocked(inf *informer.Informer[T]) {
	if len(w.pending) < 256 || inf == nil || !inf.HasSynced() {
		return
	}
	for k, p := range w.pending {
		if shown(inf, k, p) {
			delete(w.pending, k)
		}
	}
}

// shown reports whether the cache of inf shows write p of key.
func shown[T meta.Object](inf *informer.Informer[T], key string, p pendingWrite) bool {
	cached, ok, _ := inf.GetIndexer().GetByKey(key)
	if p.deleted {
		if !ok {
			return true
		}
		if a, isAcc := any(cached).(interface {
			GetUID() string
			GetDeletionTimestamp() *meta.Time
		}); isAcc {
			return (p.uid != "" && a.GetUID() != p.uid) || a.GetDeletionTimestamp() != nil
		}
		return false
	}
	if applied, err := strconv.ParseUint(inf.AppliedResourceVersion(), 10, 64); err == nil && applied >= p.rv {
		return true
	}
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(cached.GetResourceVersion(), 10, 64)
	return err != nil || n >= p.rv
}

// unshown returns the keys match selects whose last write the cache does not show yet, and
// forgets those it shows. Writes made before the informer existed are reported under the
// key "" until the cache has applied the floor.
func (w *writes[T]) unshown(inf *informer.Informer[T], match func(key string) bool) map[string]pendingWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out map[string]pendingWrite
	if w.floor > 0 {
		if applied, err := strconv.ParseUint(inf.AppliedResourceVersion(), 10, 64); err == nil && applied >= w.floor {
			w.floor = 0
		} else {
			out = map[string]pendingWrite{"": {rv: w.floor, rvText: strconv.FormatUint(w.floor, 10)}}
		}
	}
	for k, p := range w.pending {
		if !match(k) {
			continue
		}
		if shown(inf, k, p) {
			delete(w.pending, k)
			continue
		}
		if out == nil {
			out = map[string]pendingWrite{}
		}
		out[k] = p
	}
	return out
}
