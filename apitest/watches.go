package apitest

import "context"

// The open watches, as the Go API shows them (Watches, WaitForWatches, NextWatch).

// Watches returns the open watches of a resource ("" for all), oldest first.
func (s *Server) Watches(resource string) []WatchInfo {
	resource = s.canonical(resource)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []WatchInfo
	for _, w := range s.watchers {
		if resource == "" || w.info.Resource == resource {
			out = append(out, w.snapshotInfo())
		}
	}
	sortWatchInfos(out)
	return out
}

func sortWatchInfos(ws []WatchInfo) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j].ID < ws[j-1].ID; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

// WaitForWatches waits until at least n watches of resource ("" for all) are open and
// returns them.
func (s *Server) WaitForWatches(ctx context.Context, resource string, n int) ([]WatchInfo, error) {
	var got []WatchInfo
	err := s.WaitFor(ctx, func() bool {
		got = s.Watches(resource)
		return len(got) >= n
	})
	return got, err
}

type watchSub struct {
	resource string
	ch       chan WatchInfo
}

// NextWatch returns a channel that receives the next watch of resource ("" for any) opened
// after the call, once its initial events are about to be sent.
func (s *Server) NextWatch(resource string) <-chan WatchInfo {
	resource = s.canonical(resource)
	ch := make(chan WatchInfo, 1)
	s.logMu.Lock()
	s.watchSubs = append(s.watchSubs, watchSub{resource: resource, ch: ch})
	s.logMu.Unlock()
	return ch
}

func (s *Server) notifyWatchOpened(w *watcher) {
	info := w.snapshotInfo()
	s.logMu.Lock()
	defer s.logMu.Unlock()
	keep := s.watchSubs[:0]
	for _, sub := range s.watchSubs {
		if sub.resource == "" || sub.resource == info.Resource {
			sub.ch <- info
			continue
		}
		keep = append(keep, sub)
	}
	s.watchSubs = keep
}

// forWatchers runs fn on every open watcher of resource ("" for all) and returns how many.
func (s *Server) forWatchers(resource string, fn func(*watcher)) (int, error) {
	s.mu.Lock()
	r, err := s.lookupLocked(resource)
	if err != nil {
		s.mu.Unlock()
		return 0, err
	}
	var ws []*watcher
	for _, w := range s.watchers {
		if r == nil || w.res == r {
			ws = append(ws, w)
		}
	}
	s.mu.Unlock()
	for _, w := range ws {
		fn(w)
	}
	return len(ws), nil
}
