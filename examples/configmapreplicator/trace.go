package configmapreplicator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// Tracing shows one event's way through the machinery, one line per stage:
//
//	deltafifo  the reflector queued a delta for the object (the informer's transform runs then)
//	handler    after the pop and the cache update, a controller handler added Requests
//	predicate  a predicate dropped the event before the handler
//	reconcile  a Reconcile call and the writes it made
//
// The demo adds the reflector's LIST/WATCH requests and the raw watch events, seen on the wire.

// tracer filters and forwards trace lines.
type tracer struct {
	out      func(stage, msg string)
	relevant func(namespace, name string) bool
}

func newTracer(out func(stage, msg string), relevant func(namespace, name string) bool) *tracer {
	if out == nil {
		return nil
	}
	if relevant == nil {
		relevant = func(string, string) bool { return true }
	}
	return &tracer{out: out, relevant: relevant}
}

func (t *tracer) about(obj meta.Object) bool {
	return t != nil && obj != nil && t.relevant(obj.GetNamespace(), obj.GetName())
}

// traceFIFO traces every object the reflector queues into the informer's DeltaFIFO, through
// the informer's transform (which runs as a delta is queued), keeping the default transform.
func traceFIFO[T meta.Object](t *tracer, inf *informer.Informer[T], kind string) {
	_ = inf.SetTransform(func(obj T) (T, error) {
		if t.about(obj) {
			t.out("deltafifo", fmt.Sprintf("queued %s %s rv=%s", kind, name(obj), obj.GetResourceVersion()))
		}
		return informer.DropManagedFields(obj)
	})
}

func name(obj meta.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// traceHandler wraps a controller handler so that the Requests it adds are traced with the
// event that caused them.
func traceHandler[T meta.Object](t *tracer, kind, role string, h controller.EventHandler[T]) controller.EventHandler[T] {
	if t == nil {
		return h
	}
	wrap := func(verb string, obj T, q controller.Queue) controller.Queue {
		return &tracingQueue{Queue: q, t: t, cause: fmt.Sprintf("%s %s %s (%s)", verb, kind, name(obj), role)}
	}
	return controller.EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e controller.CreateEvent[T], q controller.Queue) {
			if t.about(e.Object) {
				verb := "OnAdd"
				if e.IsInInitialList {
					verb = "OnAdd (initial list)"
				}
				q = wrap(verb, e.Object, q)
			}
			h.Create(ctx, e, q)
		},
		UpdateFunc: func(ctx context.Context, e controller.UpdateEvent[T], q controller.Queue) {
			if t.about(e.ObjectNew) {
				q = wrap("OnUpdate", e.ObjectNew, q)
			}
			h.Update(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e controller.DeleteEvent[T], q controller.Queue) {
			if t.about(e.Object) {
				q = wrap("OnDelete", e.Object, q)
			}
			h.Delete(ctx, e, q)
		},
		GenericFunc: h.Generic,
	}
}

// traceWrap is traceHandler as a builder's WrapHandler.
func traceWrap[T meta.Object](t *tracer, kind, role string) func(controller.EventHandler[T]) controller.EventHandler[T] {
	return func(h controller.EventHandler[T]) controller.EventHandler[T] { return traceHandler(t, kind, role, h) }
}

// tracingQueue traces the adds of one handler call.
type tracingQueue struct {
	controller.Queue
	t     *tracer
	cause string
}

func (q *tracingQueue) Add(r controller.Request) {
	q.t.out("handler", fmt.Sprintf("%s → workqueue add %s", q.cause, r))
	q.Queue.Add(r)
}

func (q *tracingQueue) AddWithPriority(r controller.Request, p int) {
	q.t.out("handler", fmt.Sprintf("%s → workqueue add %s", q.cause, r))
	q.Queue.AddWithPriority(r, p)
}

func (q *tracingQueue) AddAfter(r controller.Request, d time.Duration) {
	q.t.out("handler", fmt.Sprintf("%s → workqueue add %s after %v", q.cause, r, d))
	q.Queue.AddAfter(r, d)
}

// tracePredicate traces the updates p drops (creates and deletes always pass the built-in
// change predicates).
func tracePredicate[T meta.Object](t *tracer, kind, pname string, p controller.Predicate[T]) controller.Predicate[T] {
	if t == nil {
		return p
	}
	return controller.PredicateFuncs[T]{
		CreateFunc:  p.Create,
		DeleteFunc:  p.Delete,
		GenericFunc: p.Generic,
		UpdateFunc: func(e controller.UpdateEvent[T]) bool {
			ok := p.Update(e)
			if !ok && t.about(e.ObjectNew) && e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion() {
				t.out("predicate", fmt.Sprintf("%s drops OnUpdate %s %s", pname, kind, name(e.ObjectNew)))
			}
			return ok
		},
	}
}

// actions collects the writes of one Reconcile call for the trace.
type actions struct {
	mu   sync.Mutex
	list []string
}

type actionsKey struct{}

// report hands the writes of a Reconcile to the tracing wrapper, if any.
func report(ctx context.Context, list []string) {
	if a, ok := ctx.Value(actionsKey{}).(*actions); ok {
		a.mu.Lock()
		a.list = append(a.list, list...)
		a.mu.Unlock()
	}
}

// traced wraps the reconciler to trace each call, its writes and its outcome in one line.
func traced(t *tracer, r controller.Reconciler) controller.Reconciler {
	if t == nil {
		return r
	}
	return controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if !t.relevant(req.Namespace, req.Name) {
			return r.Reconcile(ctx, req)
		}
		a := &actions{}
		start := time.Now()
		res, err := r.Reconcile(context.WithValue(ctx, actionsKey{}, a), req)
		took := time.Since(start).Round(10 * time.Microsecond)
		what := "in sync, nothing to write"
		if len(a.list) > 0 {
			what = strings.Join(a.list, ", ")
		}
		switch {
		case err != nil:
			what += "; error: " + err.Error() + " (retry with backoff)"
		case res.RequeueAfter > 0:
			what += fmt.Sprintf("; requeue after %v", res.RequeueAfter)
		case res.Requeue:
			what += "; requeue (the cache is behind its own writes)"
		}
		t.out("reconcile", fmt.Sprintf("%s: %s (%v)", req, what, took))
		return res, err
	})
}
