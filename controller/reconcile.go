package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/controller/events"
)

// Request names the object a reconcile is about: its namespace ("" for a cluster-scoped
// object) and name. It is comparable, so it is the controller's workqueue item: events for
// the same object collapse into one pending Request, and a Request is never reconciled by two
// workers at once. (controller-runtime's reconcile.Request wraps a types.NamespacedName;
// here the two fields are the Request.)
type Request struct {
	Namespace string
	Name      string
}

// String returns "namespace/name", or "name" for a cluster-scoped object: the key an
// informer's cache uses for the object.
func (r Request) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Result tells the controller what to do with a Request after a reconcile that returned no
// error (with an error, the Request is always retried with the rate limiter's backoff and
// Result is ignored, as controller-runtime does).
type Result struct {
	// Requeue asks for the Request to be reconciled again after the rate limiter's backoff
	// for it (AddRateLimited), without counting as an error. Use it for "not ready yet,
	// check again soon" when no better time is known.
	Requeue bool
	// RequeueAfter, if positive, asks for the Request to be reconciled again after this
	// delay (AddAfter). The rate limiter's backoff for the Request is reset (Forget). It wins
	// over Requeue.
	RequeueAfter time.Duration
}

// IsZero reports whether r asks for nothing: the Request is done until the next event.
func (r Result) IsZero() bool { return !r.Requeue && r.RequeueAfter <= 0 }

// Reconciler makes the world match the desired state of one object. It is called with the
// Request of an object that changed (or that a handler mapped an event to) and must be
// idempotent: it reads the current state (usually from informer caches through listers),
// compares it with the desired state and acts. It does not receive the event itself:
// level-triggered, not edge-triggered, so a missed or coalesced event loses nothing.
//
// Return an error to be retried with exponential backoff; a Result to ask for a later
// reconcile without an error. A panic is recovered by the controller, logged, counted and
// treated as an error.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, req Request) (Result, error)

// Reconcile calls f(ctx, req).
func (f ReconcilerFunc) Reconcile(ctx context.Context, req Request) (Result, error) {
	return f(ctx, req)
}

// PanicError is the error a controller records when Reconcile panicked: the recovered value
// and the stack of the panicking goroutine.
type PanicError struct {
	Request Request
	Value   any
	Stack   []byte
}

// Error describes the panic without the stack (the controller logs the stack separately).
func (e *PanicError) Error() string {
	return fmt.Sprintf("controller: Reconcile(%s) panicked: %v", e.Request, e.Value)
}

// Unwrap returns the panic value if it is an error (a panic(err)), so errors.Is and
// errors.As see through the panic.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// terminalError marks an error that must not be retried.
type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// TerminalError wraps err so that the controller records and logs it but does not retry
// the Request (controller-runtime's reconcile.TerminalError): for errors no retry can fix,
// such as an invalid spec. The next event for the object reconciles it again.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminalError reports whether err is, or wraps, an error made by TerminalError: for
// workers of other controllers than Controller (controller/multicluster's) that honour it.
func IsTerminalError(err error) bool { return isTerminal(err) }

func isTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

// EventRecorder records Events about objects (package controller/events); a reconciler
// gets one from Manager.EventRecorderFor.
type EventRecorder = events.EventRecorder

// The two types of Event.
const (
	// EventTypeNormal reports what a controller did or saw go as expected.
	EventTypeNormal = events.Normal
	// EventTypeWarning reports something a human may have to look at.
	EventTypeWarning = events.Warning
)
