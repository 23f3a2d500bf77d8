package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ErrBadResourceVersion is wrapped by the error of WaitFresh for a resourceVersion that is
// not a decimal integer: one the cache cannot be compared with.
var ErrBadResourceVersion = errors.New("informer: resourceVersion is not a decimal integer")

// WaitFresh waits until the cache has caught up with resourceVersion rv: every change the
// server made up to rv (of this informer's objects) is applied, so a decision taken from
// the cache is at least as new as rv (KEP-5647's "wait until the cache reaches a
// resourceVersion"). rv is typically the resourceVersion of a write, of a live read, or of
// a list. Bookmarks count: the wait ends at the next bookmark past rv even when no object
// of the informer changed. It returns nil at once if the cache is already there, ctx's
// error if ctx ends first, ErrStopped if the informer stops, and an error wrapping
// ErrBadResourceVersion for an rv that is not a decimal integer (the empty rv too).
func (inf *Informer[T]) WaitFresh(ctx context.Context, rv string) error {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return fmt.Errorf("informer: WaitFresh(%q): %w", rv, ErrBadResourceVersion)
	}
	if inf.fresh.applied.Load() >= n {
		return nil
	}
	return inf.WaitUntil(ctx, func() bool { return inf.fresh.applied.Load() >= n })
}

// IsFresh reports whether the cache has caught up with resourceVersion rv (WaitFresh would
// return at once); false for an rv that is not a decimal integer.
func (inf *Informer[T]) IsFresh(rv string) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && inf.fresh.applied.Load() >= n
}
