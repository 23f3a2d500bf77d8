package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/reflector"
)

// A label selector changed while the informer runs (a ScopedInformer's segment), without a
// relist: the reflector stops at the resourceVersion rv its cache shows; the cached objects
// the new selector no longer selects are deleted; the objects it selects and the old one did
// not are listed at exactly rv (and only they: one list per requirement of the old selector,
// the new selector plus that requirement's negation) and added; a new reflector resumes the
// watch from rv with the new selector. The objects both select are neither listed nor
// delivered again. When that cannot be done (the old selector has a > or < requirement,
// which has no negation; rv is compacted), the new reflector relists instead, and the
// relist's diff against the cache still delivers only what changed.

// reselect is a request to change the label selector of a running informer.
type reselect[T any] struct {
	from, to labels.Selector
	// list lists the collection at resourceVersion rv (Exact) with selector sel.
	list func(ctx context.Context, sel, rv, cont string) (items []T, next string, err error)
	// apply makes the informer's ListerWatcher use to; called before the new reflector
	// starts.
	apply func()
	done  chan error
}

// errNoNegation says a selector change cannot list only what changed.
var errNoNegation = errors.New("the old selector has a requirement without a negation (> or <)")

// runReflector runs the informer's reflector until ctx is done, replacing it at every
// reselect request.
func (inf *Informer[T]) runReflector(ctx context.Context, fifo deltafifo.Queue[T], lw apiclient.ListerWatcher[T], refl *reflector.Reflector[T]) {
	for {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); refl.Run(rctx) }()
		var req reselect[T]
		select {
		case <-ctx.Done():
		case req = <-inf.reselects: // nil for an informer that is not a segment
		}
		cancel()
		<-done
		if ctx.Err() != nil {
			if req.done != nil {
				req.done <- ctx.Err()
			}
			return
		}
		refl = inf.reselect(ctx, fifo, lw, refl, req)
	}
}

// reselect carries out req with the stopped reflector old and returns the new one. req.done
// gets nil when only what changed was listed, or why the new reflector relists.
func (inf *Informer[T]) reselect(ctx context.Context, fifo deltafifo.Queue[T], lw apiclient.ListerWatcher[T], old *reflector.Reflector[T], req reselect[T]) *reflector.Reflector[T] {
	rv := old.LastSyncResourceVersion()
	err := inf.applySelectorDiff(ctx, fifo, req, rv)
	req.apply()
	resume := rv
	if err != nil {
		resume = ""
		inf.logger.Info("informer: label selector changed; relisting", "from", req.from.String(), "to", req.to.String(), "reason", err)
	}
	refl := inf.newReflector(lw, fifo, resume)
	inf.mu.Lock()
	inf.refl = refl
	inf.mu.Unlock()
	req.done <- err
	return refl
}

// applySelectorDiff queues the deletions and additions of a selector change at rv.
func (inf *Informer[T]) applySelectorDiff(ctx context.Context, fifo deltafifo.Queue[T], req reselect[T], rv string) error {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || !fifo.HasSynced() {
		return errors.New("the informer has not synced yet")
	}
	pieces, ok := complementPieces(req.from, req.to)
	if !ok {
		return errNoNegation
	}
	// The cache shows everything up to rv once the FIFO has drained.
	if err := inf.WaitUntil(ctx, func() bool { return inf.fresh.applied.Load() >= n }); err != nil {
		return err
	}
	var entering []T
	seen := map[string]bool{}
	for _, sel := range pieces {
		cont := ""
		for {
			items, next, err := req.list(ctx, sel, rv, cont)
			if err != nil {
				return fmt.Errorf("listing %q at resourceVersion %s: %w", sel, rv, err)
			}
			for _, obj := range items {
				key, err := inf.keyFunc(obj)
				if err == nil && !seen[key] {
					seen[key] = true
					entering = append(entering, obj)
				}
			}
			if next == "" {
				break
			}
			cont = next
		}
	}
	var leaving []T
	inf.cache.Range(func(_ string, obj T) bool {
		if !req.to.Matches(obj.GetLabels()) {
			leaving = append(leaving, obj)
		}
		return true
	})
	for _, obj := range leaving {
		if err := fifo.Delete(obj); err != nil {
			return err
		}
	}
	for _, obj := range entering {
		if err := fifo.Add(obj); err != nil {
			return err
		}
	}
	return nil
}

// complementPieces returns the selectors whose union is what to selects and from does not:
// to with the negation of one requirement of from, for each. ok is false when a requirement
// has no negation a selector can say.
func complementPieces(from, to labels.Selector) (pieces []string, ok bool) {
	for _, r := range from.Requirements() {
		neg, ok := negate(r)
		if !ok {
			return nil, false
		}
		sel := neg.String()
		if !to.Empty() {
			sel = to.String() + "," + sel
		}
		pieces = append(pieces, sel)
	}
	return pieces, true
}

// negate returns the requirement that objects not satisfying r satisfy.
func negate(r labels.Requirement) (labels.Requirement, bool) {
	n := labels.Requirement{Key: r.Key, Values: r.Values}
	switch r.Operator {
	case labels.Exists:
		n.Operator = labels.DoesNotExist
	case labels.DoesNotExist:
		n.Operator = labels.Exists
	case labels.Equals:
		n.Operator = labels.NotEquals
	case labels.NotEquals:
		n.Operator = labels.Equals
	case labels.In:
		n.Operator = labels.NotIn
	case labels.NotIn:
		n.Operator = labels.In
	default:
		return labels.Requirement{}, false
	}
	return n, true
}
