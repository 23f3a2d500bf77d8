package controller

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/workqueue"
)

// MaxTriggers is how many distinct triggers a reconcile carries at most (Triggers.List);
// more are counted in Triggers.Dropped. Repeats of one trigger (the same kind of event of
// the same object from the same source) merge into one with a Count and cost nothing.
const MaxTriggers = 8

// TriggerKind says what a trigger was.
type TriggerKind uint8

// The kinds of trigger.
const (
	// TriggerCreate: a watch ADDED event (an object that appeared).
	TriggerCreate TriggerKind = iota + 1
	// TriggerUpdate: a watch MODIFIED event.
	TriggerUpdate
	// TriggerDelete: a watch DELETED event, or a deletion a relist found.
	TriggerDelete
	// TriggerInitialList: an object of an informer's first list (or of its cache, for a
	// handler added later): the controller's first look at it.
	TriggerInitialList
	// TriggerResync: a periodic resync (an update whose old and new resourceVersions are
	// equal).
	TriggerResync
	// TriggerGeneric: an event of a Channel source.
	TriggerGeneric
	// TriggerRetry: the previous reconcile failed; retried with backoff (Reason holds the
	// error).
	TriggerRetry
	// TriggerRequeue: the previous reconcile returned Result.Requeue.
	TriggerRequeue
	// TriggerRequeueAfter: the previous reconcile returned Result.RequeueAfter.
	TriggerRequeueAfter
)

var triggerKindNames = [...]string{"", "create", "update", "delete", "initial_list", "resync", "generic", "retry", "requeue", "requeue_after"}

// TriggerKinds lists every kind, in order (the values of the kind label of the triggers
// metric).
var TriggerKinds = []TriggerKind{TriggerCreate, TriggerUpdate, TriggerDelete, TriggerInitialList, TriggerResync,
	TriggerGeneric, TriggerRetry, TriggerRequeue, TriggerRequeueAfter}

// String returns the kind's name: "create", "update", "delete", "initial_list", "resync",
// "generic", "retry", "requeue" or "requeue_after".
func (k TriggerKind) String() string {
	if int(k) < len(triggerKindNames) && k != 0 {
		return triggerKindNames[k]
	}
	return "unknown(" + strconv.Itoa(int(k)) + ")"
}

// Trigger is one cause of a reconcile: an event a source's handler turned into the
// Request, or the controller's own requeue of it. The queue merges the triggers of a
// Request with its adds: a Request added three times while it waits is reconciled once,
// with its three triggers (TriggersFrom).
type Trigger struct {
	// Kind says what it was.
	Kind TriggerKind
	// Source names where it came from: the informer ("configmaps.v1", "pods.v1 in
	// default"), "channel" for a Channel source, "" for the controller's own requeues.
	Source string
	// Namespace and Name are the object of the event: the Request's own object, or, for
	// an owned or mapped one, the child whose event enqueued its owner. For a requeue, the
	// Request's.
	Namespace, Name string
	// ResourceVersion is the object's in the event ("" when unknown); of the newest event
	// when several merged.
	ResourceVersion string
	// Time is when the event arrived at the informer (a watch event), else when the Request
	// was enqueued; of the oldest when several merged.
	Time time.Time
	// Count is the number of events this trigger stands for (1, more when repeats merged).
	Count int
	// Reason is the error of the reconcile a TriggerRetry retries ("" for other kinds).
	Reason string

	// enqueued is when the handler enqueued the Request (the queue span's start).
	enqueued time.Time
	// watch: the event came from a watch (Time is its arrival), so its latency is measured.
	watch bool
	// span carries the event's span (nil without a tracer); last, the newest event's span
	// when repeats merged: the reconcile links to the first and the newest of them. remote
	// is the span context the object's traceparent annotation named (traceparent.go).
	span, last, remote context.Context
}

// String describes the trigger: "update configmaps.v1 default/a@42 ×3".
func (t Trigger) String() string {
	var b strings.Builder
	b.WriteString(t.Kind.String())
	if t.Source != "" {
		b.WriteString(" ")
		b.WriteString(t.Source)
	}
	if t.Name != "" {
		b.WriteString(" ")
		if t.Namespace != "" {
			b.WriteString(t.Namespace)
			b.WriteString("/")
		}
		b.WriteString(t.Name)
	}
	if t.ResourceVersion != "" {
		b.WriteString("@")
		b.WriteString(t.ResourceVersion)
	}
	if t.Count > 1 {
		b.WriteString(" ×")
		b.WriteString(strconv.Itoa(t.Count))
	}
	if t.Reason != "" {
		b.WriteString(": ")
		b.WriteString(t.Reason)
	}
	return b.String()
}

// Triggers are what caused one reconcile.
type Triggers struct {
	// List holds the triggers in the order they were recorded (a merged one at the place
	// of its first event); empty when nothing recorded one (a Request added directly to
	// the queue, outside a source's handler).
	List []Trigger
	// Dropped counts the triggers past MaxTriggers that were not kept.
	Dropped int
}

// String lists the triggers, "; "-separated, with the number dropped if any.
func (t Triggers) String() string {
	parts := make([]string, 0, len(t.List)+1)
	for _, tr := range t.List {
		parts = append(parts, tr.String())
	}
	if t.Dropped > 0 {
		parts = append(parts, strconv.Itoa(t.Dropped)+" more dropped")
	}
	return strings.Join(parts, "; ")
}

// Has reports whether some trigger is of kind k.
func (t Triggers) Has(k TriggerKind) bool {
	for i := range t.List {
		if t.List[i].Kind == k {
			return true
		}
	}
	return false
}

// triggersKey is the context key of a reconcile's triggers.
type triggersKey struct{}

// TriggersFrom returns the triggers of the reconcile whose context ctx is (or derives
// from): what made the controller call Reconcile. The zero Triggers outside a reconcile.
// The reconcile owns the slice.
func TriggersFrom(ctx context.Context) Triggers {
	t, _ := ctx.Value(triggersKey{}).(*Triggers)
	if t == nil {
		return Triggers{}
	}
	return *t
}

// mergeTrigger folds c into kept when c repeats it: the same kind of event, of the same
// object, from the same source. The merged trigger keeps the oldest time and span, the
// newest resourceVersion and reason, and the newest span apart (two spans at most, however
// many events merged).
func mergeTrigger(kept *Trigger, c Trigger) bool {
	if kept.Kind != c.Kind || kept.Name != c.Name || kept.Namespace != c.Namespace || kept.Source != c.Source {
		return false
	}
	kept.Count += c.Count
	if c.ResourceVersion != "" {
		kept.ResourceVersion = c.ResourceVersion
	}
	if c.Reason != "" {
		kept.Reason = c.Reason
	}
	if kept.remote == nil {
		kept.remote = c.remote
	}
	if kept.span == nil {
		kept.span = c.span
	} else if c.span != nil {
		kept.last = c.span
	}
	return true
}

// triggerQueue is the controller's queue: Requests with their triggers.
type triggerQueue = workqueue.CausesInterface[Request, Trigger]

// newTriggerQueue returns the controller's queue.
func newTriggerQueue(name string, opts Options) triggerQueue {
	q, err := workqueue.NewRateLimitingWithCauses[Request](opts.RateLimiter, queueConfig(name, opts),
		workqueue.CauseOptions[Trigger]{Max: MaxTriggers, Merge: mergeTrigger})
	if err != nil {
		panic(err) // MaxTriggers is within the queue's bounds
	}
	return q
}

// requeueTrigger is the trigger of the controller's own re-add of req.
func requeueTrigger(kind TriggerKind, req Request, err error) Trigger {
	now := time.Now()
	t := Trigger{Kind: kind, Namespace: req.Namespace, Name: req.Name, Time: now, enqueued: now, Count: 1}
	if err != nil {
		t.Reason = err.Error()
	}
	return t
}

// TriggerMetricsProvider is implemented by a MetricsProvider that also counts the triggers
// of reconciles by kind (the Manager's Registry does, as
// informerkit_controller_triggers_total{controller,kind}, every merged event counted, and
// informerkit_controller_triggers_dropped_total{controller}).
type TriggerMetricsProvider interface {
	NewTriggersMetric(controller, kind string) TriggerCounter
	NewDroppedTriggersMetric(controller string) TriggerCounter
}

// TriggerCounter is a counter that grows by any amount.
type TriggerCounter interface {
	Add(delta float64)
}

// triggerMetrics are a controller's trigger counters; nil without a provider.
type triggerMetrics struct {
	byKind  [len(triggerKindNames)]TriggerCounter
	dropped TriggerCounter
}

func newTriggerMetrics(controller string, p MetricsProvider) *triggerMetrics {
	tp, ok := p.(TriggerMetricsProvider)
	if !ok {
		return nil
	}
	m := &triggerMetrics{dropped: tp.NewDroppedTriggersMetric(controller)}
	for _, k := range TriggerKinds {
		m.byKind[k] = tp.NewTriggersMetric(controller, k.String())
	}
	return m
}

// count adds a reconcile's triggers to the counters.
func (m *triggerMetrics) count(t *Triggers) {
	if m == nil {
		return
	}
	for i := range t.List {
		if k := t.List[i].Kind; int(k) < len(m.byKind) && m.byKind[k] != nil {
			m.byKind[k].Add(float64(t.List[i].Count))
		}
	}
	if t.Dropped > 0 {
		m.dropped.Add(float64(t.Dropped))
	}
}
