// Package events records Kubernetes Events (core/v1) about the objects a controller
// manages, as client-go's tools/record does: a Recorder queues each event without blocking
// and without ever returning an error, and a Broadcaster writes the queue to the API server
// in the background.
//
// The Broadcaster applies client-go's correlator before writing: an event identical to one
// already written (but for its timestamps) patches that event's count and lastTimestamp; the
// 10th event within 10 minutes that differs from the others of its object, type and reason
// only by its message starts one "(combined from similar events): ..." event instead; and a
// token bucket per source and object (25 events, then one every 5 minutes) drops the rest.
// The queue is bounded (1000): when full, events are dropped and counted. Writes that fail
// with 429, 5xx or a connection error are retried (12 tries, 10 s apart, honouring
// Retry-After); others are abandoned and logged. When Run's context ends, the queued events
// are written within the drain timeout.
//
// An Event's name is its object's and a nanosecond count unique in the process, so that
// Events recorded at one instant (in a testing/synctest bubble, say) never share a name; a
// name another writer holds already gets the Event written under a new one, never dropped.
//
// Events name their object's kind and apiVersion from the type registry (package kinds):
// objects read from informer caches do not carry them. Stats counts everything, dropped and
// filtered events included. A controller.Manager runs a Broadcaster and hands out recorders
// (Manager.EventRecorderFor).
package events
