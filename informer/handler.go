package informer

import "time"

// ResourceEventHandler receives the notifications of one registration on an informer. The
// informer calls it from a single goroutine per registration, so a handler never runs
// concurrently with itself; it may run concurrently with the handlers of other registrations.
//
// Objects are shared with the informer's cache and with every other handler: a handler must
// not modify them (copy first).
//
// It is client-go's ResourceEventHandler with typed objects: OnDelete receives the last known
// state of the object and a flag instead of a DeletedFinalStateUnknown wrapper.
type ResourceEventHandler[T any] interface {
	// OnAdd is called when an object enters the handler's view. isInInitialList is true for
	// the objects of the informer's first list and, for a handler added after the informer
	// started, for every object the cache held when the handler was added.
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate is called when an object the handler has seen changes. oldObj is the state the
	// handler saw last (its previous OnAdd or OnUpdate newObj). When oldObj and newObj have
	// the same resourceVersion the call is a periodic resync.
	OnUpdate(oldObj, newObj T)
	// OnDelete is called when an object the handler has seen leaves the cache. obj is its last
	// known state. finalStateUnknown is true when the deletion was inferred from a relist
	// (the watch missed the DELETED event): obj is then the state the cache held, which may
	// be older than the object's final state on the server.
	OnDelete(obj T, finalStateUnknown bool)
}

// EventInfo is what an informer knows of the watch event behind a notification.
type EventInfo struct {
	// Arrived is when the watch event reached the informer (its DeltaFIFO). For a
	// notification that merged several events (a handler that fell behind), the earliest
	// one's. Zero for the objects of a list or a relist, for resyncs, and for an informer
	// without handler that implements EventInfoHandler when the event arrived.
	Arrived time.Time
}

// EventInfoHandler is a ResourceEventHandler that also wants to know when the events behind
// its notifications arrived, to measure the time from a watch event to its processing (the
// controller's event-to-reconcile latency) or to start a trace there. The informer calls
// EventInfo on the handler's goroutine right before each OnAdd, OnUpdate and OnDelete it
// describes. Registering one makes the informer stamp every watch event with the time it
// arrived (a clock read per event), from then on.
type EventInfoHandler[T any] interface {
	ResourceEventHandler[T]
	EventInfo(info EventInfo)
}

// ResourceEventHandlerFuncs adapts plain functions to ResourceEventHandler. A nil function
// ignores its notification.
type ResourceEventHandlerFuncs[T any] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd calls AddFunc if it is set.
func (f ResourceEventHandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f ResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f ResourceEventHandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj, finalStateUnknown)
	}
}

// FilteringResourceEventHandler passes to Handler only the objects that satisfy FilterFunc,
// and turns filter transitions into adds and deletes, as client-go's does:
//
//   - an add of an object that passes the filter is an add; otherwise nothing;
//   - an update whose old object passed and whose new object passes is an update;
//   - an update whose new object starts to pass is an add (isInInitialList false);
//   - an update whose old object passed and whose new object no longer passes is a delete of
//     the new object (finalStateUnknown false);
//   - a delete of an object that passes is a delete; otherwise nothing.
//
// FilterFunc must be a pure function of the object: it is evaluated again on the old object of
// each update, so a filter whose answer changes over time for the same object gives the
// wrapped handler an inconsistent view.
type FilteringResourceEventHandler[T any] struct {
	FilterFunc func(obj T) bool
	Handler    ResourceEventHandler[T]
}

// OnAdd calls Handler.OnAdd if obj passes the filter.
func (f FilteringResourceEventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if f.FilterFunc(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate calls Handler.OnUpdate, OnAdd or OnDelete depending on which of oldObj and newObj
// pass the filter.
func (f FilteringResourceEventHandler[T]) OnUpdate(oldObj, newObj T) {
	oldPasses, newPasses := f.FilterFunc(oldObj), f.FilterFunc(newObj)
	switch {
	case oldPasses && newPasses:
		f.Handler.OnUpdate(oldObj, newObj)
	case !oldPasses && newPasses:
		f.Handler.OnAdd(newObj, false)
	case oldPasses && !newPasses:
		f.Handler.OnDelete(newObj, false)
	}
}

// OnDelete calls Handler.OnDelete if obj passes the filter.
func (f FilteringResourceEventHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.FilterFunc(obj) {
		f.Handler.OnDelete(obj, finalStateUnknown)
	}
}
