package controller

import (
	"context"
	"sync"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// ScopedInformerFor returns an informer of T for gvr whose scope (namespaces, label
// selector) can change while the Manager runs (informer.ScopedInformer): give it to Kind as
// a controller's source and call SetScope when the set of namespaces or the selector the
// controller serves changes. Namespaces added are listed and their objects reach the
// controller as creates; objects that leave the scope reach it as deletes (a reconcile that
// finds nothing); objects that stay are not delivered again. The Manager runs it with its
// caches, from Start to the end of the drain, and /readyz covers it. Unlike InformerFor's it
// is not shared: each call makes one, with the factory's settings (its namespace and
// selectors do not apply: scope says what it caches). Call it before Start.
func ScopedInformerFor[T meta.Object](m *Manager, gvr meta.GroupVersionResource, scope informer.Scope) *informer.ScopedInformer[T] {
	inf := informer.NewScopedFor[T](m.factory, gvr, scope)
	m.follow.mu.Lock()
	m.follow.scoped = append(m.follow.scoped, inf)
	m.follow.mu.Unlock()
	m.track(inf.Name(), inf)
	return inf
}

// runScoped runs the scoped informers under the caches' context; the returned function
// waits for them once that context is done.
func (m *Manager) runScoped(cachesCtx context.Context) (wait func()) {
	m.follow.mu.Lock()
	scoped := m.follow.scoped
	m.follow.mu.Unlock()
	var wg sync.WaitGroup
	for _, inf := range scoped {
		wg.Go(func() { inf.Run(cachesCtx) })
	}
	return wg.Wait
}
