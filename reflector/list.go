package reflector

import (
	"context"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// list syncs the store with a LIST of the collection: at "0" the first time, at the last
// synced resourceVersion later, and at once again at "" if that one is expired (410) or
// newer than the server knows.
func (r *Reflector[T]) list(ctx context.Context) error {
	rv := r.relistRV()
	err := r.listAt(ctx, rv)
	if err != nil && rv != "" && needsFreshList(err) && ctx.Err() == nil {
		r.log.Info("list resourceVersion unavailable, listing the newest state", "resourceVersion", rv, "err", err)
		r.setRVUnavailable(true)
		err = r.listAt(ctx, "")
	}
	if err != nil {
		r.st.listErrors.Add(1)
		return r.wrap("list", err)
	}
	return nil
}

// pageSize is the limit of a list at rv; 0 means unpaged. See Options.PageSize.
func (r *Reflector[T]) pageSize(rv string) int64 {
	r.mu.Lock()
	paginated := r.paginatedResult
	r.mu.Unlock()
	switch {
	case r.cfg.PageSize > 0:
		return r.cfg.PageSize
	case r.cfg.PageSize < 0:
		return 0
	case paginated, rv == "", rv == "0":
		return DefaultPageSize
	}
	// An unpaged list at a specific resourceVersion can be served from the watch cache.
	return 0
}

// listAt lists every page at rv into a fresh sink and finishes it. A 410 on a continue page
// (the snapshot the pages come from was compacted) falls back to one unpaged list, at the
// snapshot's resourceVersion when the first page gave one, so that the store never goes back
// in time from the objects already handed over.
func (r *Reflector[T]) listAt(ctx context.Context, rv string) error {
	opts := apiclient.ListOptions{ResourceVersion: rv, Limit: r.pageSize(rv)}
	s := r.newSink()
	defer func() { s.abort() }() // s changes on the continue-token fallback
	snapshotRV := ""
	for {
		meta, err := r.listPage(ctx, opts, s)
		if err != nil {
			if opts.Continue == "" || !isExpired(err) || ctx.Err() != nil {
				return err
			}
			r.st.fallbacks.Add(1)
			r.log.Info("continue token expired, falling back to one full list", "err", err, "setting", "reflector.Options.PageSize")
			s.abort()
			s = r.newSink()
			full := apiclient.ListOptions{ResourceVersion: rv}
			if snapshotRV != "" {
				full.ResourceVersion = snapshotRV
			}
			meta, err = r.listPage(ctx, full, s)
			if err != nil {
				return err
			}
			if meta.Continue != "" {
				return fmt.Errorf("unpaged list returned a continue token")
			}
			return r.finishList(s, meta.ResourceVersion)
		}
		if opts.Continue == "" {
			snapshotRV = meta.ResourceVersion
			if rv == "0" && meta.Continue != "" {
				r.mu.Lock()
				r.paginatedResult = true
				r.mu.Unlock()
			}
		}
		if meta.Continue == "" {
			listRV := meta.ResourceVersion
			if listRV == "" {
				listRV = snapshotRV
			}
			return r.finishList(s, listRV)
		}
		// Continue pages carry no resourceVersion: the token pins the snapshot, and the
		// server rejects both together.
		opts.Continue = meta.Continue
		opts.ResourceVersion = ""
		opts.ResourceVersionMatch = ""
	}
}

func (r *Reflector[T]) finishList(s *sink[T], rv string) error {
	if err := s.finish(rv); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	r.markSynced(rv, false)
	return nil
}

// listPage requests one page and hands its items to s. The client's own retries are off
// (ListOptions.DisableRetries): a failure reaches the reflector, its backoff and its
// WatchErrorHandler at once, with the server's Retry-After.
func (r *Reflector[T]) listPage(ctx context.Context, opts apiclient.ListOptions, s *sink[T]) (meta.ListMeta, error) {
	opts.DisableRetries = true
	r.st.listRequests.Add(1)
	r.markAttempt()
	if r.streamLW != nil && s.incremental() {
		n := uint64(0)
		meta, err := r.streamLW.ListEach(ctx, opts, func(obj T) error {
			n++
			return s.add(obj)
		})
		r.st.listedItems.Add(n)
		return meta, err
	}
	page, err := r.lw.List(ctx, opts)
	if err != nil {
		return meta.ListMeta{}, err
	}
	if page == nil {
		return meta.ListMeta{}, fmt.Errorf("list returned no page")
	}
	r.st.listedItems.Add(uint64(len(page.Items)))
	if err := s.addPage(page.Items); err != nil {
		return meta.ListMeta{}, err
	}
	return page.ListMeta, nil
}

// sink collects one list for the store: straight into an IncrementalReplacer's Replacement
// (begun at the first item), or into a slice for Replace.
type sink[T meta.Object] struct {
	r     *Reflector[T]
	repl  Replacement[T]
	items []T
	done  bool
}

func (r *Reflector[T]) newSink() *sink[T] { return &sink[T]{r: r} }

func (s *sink[T]) incremental() bool { return s.r.incr != nil }

func (s *sink[T]) begin() error {
	if s.repl != nil {
		return nil
	}
	repl, err := s.r.incr.BeginReplace()
	if err != nil {
		return fmt.Errorf("store: begin replace: %w", err)
	}
	if repl == nil {
		return fmt.Errorf("store: BeginReplace returned no Replacement")
	}
	s.repl = repl
	return nil
}

func (s *sink[T]) add(obj T) error {
	if !s.incremental() {
		s.items = append(s.items, obj)
		return nil
	}
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.repl.Add(obj); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

func (s *sink[T]) addPage(items []T) error {
	if !s.incremental() {
		if s.items == nil {
			s.items = items // the first (often the only) page: no copy
		} else {
			s.items = append(s.items, items...)
		}
		return nil
	}
	for i := range items {
		if err := s.add(items[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *sink[T]) finish(rv string) error {
	s.done = true
	if !s.incremental() {
		items := s.items
		s.items = nil
		if items == nil {
			items = []T{}
		}
		return s.r.store.Replace(items, rv)
	}
	if err := s.begin(); err != nil {
		return err
	}
	return s.repl.Finish(rv)
}

// abort drops a list that did not finish; it does nothing after finish or a previous abort.
func (s *sink[T]) abort() {
	if s.done {
		return
	}
	s.done = true
	s.items = nil
	if s.repl != nil {
		s.repl.Abort()
	}
}
