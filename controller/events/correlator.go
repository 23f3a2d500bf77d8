package events

import (
	"container/list"
	"encoding/json"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/informerkit/informerkit/meta"
)

// The correlator's defaults are client-go's (tools/record/events_cache.go).
const (
	// DefaultCacheSize bounds each of the correlator's three caches (LRU).
	DefaultCacheSize = 4096
	// DefaultAggregateMaxEvents: the 10th event that differs from earlier ones of the same
	// object, type and reason only by its message, within DefaultAggregateInterval, is
	// written as one "(combined from similar events)" event instead.
	DefaultAggregateMaxEvents = 10
	// DefaultAggregateInterval is the window of aggregation.
	DefaultAggregateInterval = 10 * time.Minute
	// DefaultSpamBurst and DefaultSpamQPS are the token bucket of each source and object: 25
	// events at once, then one every 5 minutes.
	DefaultSpamBurst = 25
	DefaultSpamQPS   = 1.0 / 300
)

// aggregatePrefix starts the message of an aggregated event.
const aggregatePrefix = "(combined from similar events): "

// correlation is what the correlator decided for one event.
type correlation struct {
	event *Event
	// key identifies the event in the log of written events (where its name and count are).
	key string
	// patch, if set, is the merge patch that brings the existing event (event.Name) up to
	// date: count, lastTimestamp and message.
	patch []byte
	// skip: the spam filter dropped the event.
	skip bool
}

// correlator turns a stream of events into writes as client-go's EventCorrelator does:
//
//  1. aggregation: events that differ only by message are grouped (same source, object,
//     type, reason and reporter); once maxEvents different messages have been seen within
//     the interval, each further one becomes a new "(combined from similar events)" event,
//     whose count then grows;
//  2. counting: an event identical to one already written (but for its timestamps) patches
//     that event's count and lastTimestamp instead of creating another;
//  3. spam filtering: a token bucket per source and object (burst, then qps) drops what is
//     over the budget, counts included.
//
// It is used by one goroutine (the broadcaster's sender).
type correlator struct {
	maxEvents   int
	interval    time.Duration
	burst       int
	qps         float64
	aggregates  *lru[*aggregateRecord]
	logged      *lru[*loggedEvent]
	spamBuckets *lru[*rate.Limiter]
}

type aggregateRecord struct {
	messages map[string]struct{}
	last     time.Time
}

// loggedEvent is what the log keeps of a written event.
type loggedEvent struct {
	name            string
	resourceVersion string
	count           int32
	first           meta.Time
}

func newCorrelator(cacheSize, maxEvents int, interval time.Duration, burst int, qps float64) *correlator {
	return &correlator{
		maxEvents: maxEvents, interval: interval, burst: burst, qps: qps,
		aggregates:  newLRU[*aggregateRecord](cacheSize),
		logged:      newLRU[*loggedEvent](cacheSize),
		spamBuckets: newLRU[*rate.Limiter](cacheSize),
	}
}

func joinKey(parts ...string) string { return strings.Join(parts, "\x00") }

// eventKey identifies identical events: everything but the timestamps and the count.
func eventKey(e *Event) string {
	o := e.InvolvedObject
	return joinKey(e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, o.FieldPath, o.UID, o.APIVersion,
		e.Type, e.Reason, e.Message)
}

// aggregateKey groups events that differ only by message.
func aggregateKey(e *Event) string {
	o := e.InvolvedObject
	return joinKey(e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, o.UID, o.APIVersion,
		e.Type, e.Reason, e.ReportingController, e.ReportingInstance)
}

// spamKey is the token bucket's: one per source and object.
func spamKey(e *Event) string {
	o := e.InvolvedObject
	return joinKey(e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, o.UID, o.APIVersion)
}

// correlate decides what to write for e (which it may change) at time now.
func (c *correlator) correlate(e *Event, now time.Time) correlation {
	e, key := c.aggregate(e, now)
	patch := c.observe(e, key)
	if c.spam(e, now) {
		return correlation{skip: true}
	}
	return correlation{event: e, key: key, patch: patch}
}

// aggregate returns the event to write and its key: e itself, or past the threshold a new
// aggregate event keyed by its group.
func (c *correlator) aggregate(e *Event, now time.Time) (*Event, string) {
	akey := aggregateKey(e)
	rec, ok := c.aggregates.get(akey)
	if !ok || now.Sub(rec.last) > c.interval {
		rec = &aggregateRecord{messages: map[string]struct{}{}}
	}
	rec.messages[e.Message] = struct{}{}
	rec.last = now
	c.aggregates.add(akey, rec)
	if len(rec.messages) < c.maxEvents {
		return e, eventKey(e)
	}
	// Keep the set below the threshold, so that its size stays bounded (client-go drops an
	// arbitrary message too).
	for m := range rec.messages {
		delete(rec.messages, m)
		break
	}
	t := meta.NewTime(now)
	agg := &Event{
		TypeMeta: e.TypeMeta,
		ObjectMeta: meta.ObjectMeta{
			Name:      eventName(e.InvolvedObject.Name, now),
			Namespace: e.Namespace,
		},
		InvolvedObject:      e.InvolvedObject,
		Reason:              e.Reason,
		Message:             aggregatePrefix + e.Message,
		Source:              e.Source,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                e.Type,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	return agg, akey
}

// observe counts e under key: if an event with that key was written, e takes its name,
// first timestamp and count+1, and the returned merge patch brings it up to date.
func (c *correlator) observe(e *Event, key string) []byte {
	var patch []byte
	if last, ok := c.logged.get(key); ok && last.count > 0 {
		e.Name = last.name
		e.ResourceVersion = last.resourceVersion
		e.FirstTimestamp = last.first
		e.Count = last.count + 1
		patch, _ = json.Marshal(struct {
			Count         int32     `json:"count"`
			LastTimestamp meta.Time `json:"lastTimestamp"`
			Message       string    `json:"message"`
		}{e.Count, e.LastTimestamp, e.Message})
	}
	c.logged.add(key, &loggedEvent{name: e.Name, resourceVersion: e.ResourceVersion, count: e.Count, first: e.FirstTimestamp})
	return patch
}

// written records the server's version of an event written under key (its name and
// resourceVersion, which a create of an aggregate or a re-create may have changed).
func (c *correlator) written(key string, e *Event) {
	c.logged.add(key, &loggedEvent{name: e.Name, resourceVersion: e.ResourceVersion, count: e.Count, first: e.FirstTimestamp})
}

// spam reports whether the token bucket of e's source and object is empty.
func (c *correlator) spam(e *Event, now time.Time) bool {
	k := spamKey(e)
	l, ok := c.spamBuckets.get(k)
	if !ok {
		l = rate.NewLimiter(rate.Limit(c.qps), c.burst)
	}
	c.spamBuckets.add(k, l)
	return !l.AllowN(now, 1)
}

// lru is a least-recently-used cache of bounded size, for one goroutine.
type lru[V any] struct {
	max   int
	order *list.List // front: most recent; values are *lruEntry[V]
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key string
	val V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lru[V]) get(key string) (V, bool) {
	if el, ok := l.items[key]; ok {
		l.order.MoveToFront(el)
		return el.Value.(*lruEntry[V]).val, true
	}
	var zero V
	return zero, false
}

func (l *lru[V]) add(key string, val V) {
	if el, ok := l.items[key]; ok {
		el.Value.(*lruEntry[V]).val = val
		l.order.MoveToFront(el)
		return
	}
	l.items[key] = l.order.PushFront(&lruEntry[V]{key: key, val: val})
	if l.order.Len() > l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(*lruEntry[V]).key)
	}
}

func (l *lru[V]) len() int { return l.order.Len() }
