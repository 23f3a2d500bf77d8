package walkthrough

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/tracing"
	"github.com/informerkit/informerkit/workqueue"
)

// This file turns what every stage reports (its own hook, the tracing spans, the bytes on
// the wire) into reports, each in its lane and linked to the report it follows from.

// slowHandler is the name of the slow handler's registration.
const slowHandler = "slow"

// keyRV names one state of one object.
func keyRV(key, rv string) string { return key + "@" + rv }

// ---- the wire: the informer's client's requests and watch events ----

// wire is the informer's client's transport: it reports each LIST and WATCH the reflector
// sends and every watch event as the decoder reads it.
type wire struct {
	base http.RoundTripper
	rc   *recorder
}

// queryShown are the query parameters the reports show, in this order; the others
// (timeoutSeconds, random by design) are left out so that the walkthrough does not change.
var queryShown = []string{"watch", "sendInitialEvents", "resourceVersion", "resourceVersionMatch", "allowWatchBookmarks", "limit"}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	in := w.rc.begin()
	q := req.URL.Query()
	var shown []string
	for _, k := range queryShown {
		if v := q.Get(k); v != "" || (k == "resourceVersion" && q.Has(k)) {
			shown = append(shown, k+"="+url.QueryEscape(v))
		}
	}
	verb := "LIST"
	if q.Get("watch") == "true" {
		verb = "WATCH"
	}
	text := fmt.Sprintf("%s %s?%s", verb, req.URL.Path, strings.Join(shown, "&"))
	sent := w.rc.add(in, &report{lane: laneReflector, from: actorReflector, to: actorServer, text: text, match: "request"})
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	in = w.rc.begin()
	if resp.StatusCode != http.StatusOK {
		w.rc.add(in, &report{lane: laneReflector, from: actorServer, to: actorReflector, text: fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}, sent)
		return resp, nil
	}
	if verb == "WATCH" {
		resp.Body = &eventTee{ReadCloser: resp.Body, rc: w.rc, request: sent}
		return resp, nil
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr == nil {
		var list struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(body, &list) == nil {
			w.rc.add(in, &report{lane: laneReflector, from: actorServer, to: actorReflector,
				text: fmt.Sprintf("200: %d items at rv=%s", len(list.Items), list.Metadata.ResourceVersion)}, sent)
		}
	}
	return resp, nil
}

// eventTee reports each watch event (one JSON document per line) as the decoder reads it.
type eventTee struct {
	io.ReadCloser
	rc      *recorder
	request *report
	partial []byte
}

func (e *eventTee) Read(b []byte) (int, error) {
	n, err := e.ReadCloser.Read(b)
	e.partial = append(e.partial, b[:n]...)
	for {
		i := bytes.IndexByte(e.partial, '\n')
		if i < 0 {
			break
		}
		e.event(e.partial[:i])
		e.partial = e.partial[i+1:]
	}
	return n, err
}

func (e *eventTee) event(line []byte) {
	in := e.rc.begin()
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct {
				Namespace       string            `json:"namespace"`
				Name            string            `json:"name"`
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
			Code    int    `json:"code"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"object"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	m := ev.Object.Metadata
	r := &report{lane: laneWire, from: actorServer, to: actorReflector}
	switch ev.Type {
	case "BOOKMARK":
		r.text = "BOOKMARK rv=" + m.ResourceVersion
		if m.Annotations["k8s.io/initial-events-end"] == "true" {
			r.text += " (k8s.io/initial-events-end: the initial events are complete)"
			r.match = "wire|end"
		}
	case "ERROR":
		r.text = fmt.Sprintf("ERROR %d %s: %s", ev.Object.Code, ev.Object.Reason, ev.Object.Message)
		r.match = "wire|error"
	default:
		key := m.Namespace + "/" + m.Name
		r.text = fmt.Sprintf("%s %s rv=%s", ev.Type, key, m.ResourceVersion)
		r.match = "wire|" + keyRV(key, m.ResourceVersion)
	}
	e.rc.add(in, r, e.request)
}

// ---- the informer: its Observe hook ----

// observeInformer reports one informer observation.
func (rc *recorder) observeInformer(o informer.Observation[*ConfigMap]) {
	in := rc.begin()
	rv := ""
	if o.Object != nil {
		rv = o.Object.ResourceVersion
	}
	obj := keyRV(o.Key, rv)
	handlerActor, handlerLane := actorController, laneController
	if o.Handler == slowHandler {
		handlerActor, handlerLane = actorSlow, laneSlow
	}
	switch o.Stage {
	case informer.StageQueued:
		r := &report{lane: laneReflector, from: actorReflector, to: actorFIFO}
		var cause *report
		switch o.Delta {
		case deltafifo.ReplacedEnd:
			r.text = "relist complete at rv=" + o.ResourceVersion + ": FIFO queues ReplacedEnd"
			r.match = "queued|end"
			cause = rc.find("wire|end")
		case informer.Kept:
			r.text = fmt.Sprintf("relist: %s unchanged (cache has rv=%s): kept, nothing queued", o.Key, rv)
			cause = rc.find("wire|" + obj)
		case deltafifo.ReplacedChunk:
			r.text = fmt.Sprintf("relist: %s rv=%s held for a ReplacedChunk", o.Key, rv)
			r.match = "queued|" + obj
			cause = rc.find("wire|" + obj)
		default:
			r.text = fmt.Sprintf("%s %s rv=%s", o.Delta, o.Key, rv)
			r.match = "queued|" + obj
			cause = rc.find("wire|" + obj)
		}
		rc.add(in, r, cause)
	case informer.StagePopped:
		r := &report{lane: lanePopped, from: actorFIFO, to: actorInformer}
		var cause *report
		switch o.Delta {
		case deltafifo.ReplacedEnd:
			r.text = "PopBatch: ReplacedEnd (delete what the relist lacked)"
			r.match = "popped|end"
			cause = rc.find("queued|end")
		default:
			r.text = fmt.Sprintf("PopBatch: %s %s rv=%s", o.Delta, o.Key, rv)
			r.match = "popped|" + obj
			cause = rc.find("queued|" + obj)
		}
		rc.add(in, r, cause)
	case informer.StageCached:
		text := fmt.Sprintf("cache %s %s rv=%s", o.Notification, o.Key, rv)
		if o.FinalStateUnknown {
			text += " (tombstone: final state unknown)"
		}
		cause := rc.findFirst("popped|"+obj, "popped|end")
		rc.add(in, &report{lane: laneInformer, from: actorInformer, to: actorInformer, text: text}, cause)
	case informer.StageResync:
		rc.add(in, &report{lane: laneInformer, from: actorInformer, to: actorInformer,
			text: fmt.Sprintf("resync due for %s: %s from the cache", o.Handler, o.Key)})
	case informer.StageNotified:
		rc.add(in, &report{lane: laneInformer, from: actorInformer, to: handlerActor,
			text:  fmt.Sprintf("listener queues %s %s", o.Notification, obj) + rc.pending(o),
			match: "listener|" + o.Handler + "|" + obj})
	case informer.StageCoalesced:
		text := fmt.Sprintf("listener coalesces %s into the pending notification of %s: now %s", obj, o.Key, o.Notification)
		if o.Notification == "" {
			text = fmt.Sprintf("listener coalesces the delete of %s with its pending add: nothing left to tell", o.Key)
		}
		rc.add(in, &report{lane: laneInformer, from: handlerActor, to: handlerActor, text: text + rc.pending(o),
			match: "listener|" + o.Handler + "|" + obj})
	case informer.StageDelivered:
		call := map[string]string{"add": "OnAdd", "update": "OnUpdate", "delete": "OnDelete"}[o.Notification]
		args := obj
		switch {
		case o.Notification == "update" && o.Old != nil && o.Old != o.Object:
			args = fmt.Sprintf("%s: rv=%s → rv=%s", o.Key, o.Old.ResourceVersion, rv)
		case o.Notification == "update":
			args = fmt.Sprintf("%s: rv=%s → the same object", o.Key, rv)
		case o.Notification == "add" && o.InitialList:
			args += ", isInInitialList"
		case o.Notification == "delete" && o.FinalStateUnknown:
			args += ", finalStateUnknown"
		}
		rc.add(in, &report{lane: handlerLane, from: handlerActor, to: handlerActor, text: fmt.Sprintf("%s(%s)", call, args)},
			rc.find("listener|"+o.Handler+"|"+obj))
	}
}

// pending describes the backlog after a listener stage, for the slow handler only: the
// controller's handler keeps up, and how far it is behind depends on timing.
func (rc *recorder) pending(o informer.Observation[*ConfigMap]) string {
	if o.Handler != slowHandler || !rc.showBacklog.Load() {
		return ""
	}
	return fmt.Sprintf(" (%d pending)", o.Pending)
}

// ---- the workqueue: its Observe hook ----

// observeQueue reports one workqueue observation.
func (rc *recorder) observeQueue(o workqueue.Observation) {
	in := rc.begin()
	req := o.Item.(controller.Request).String()
	switch o.Op {
	case workqueue.OpAdd:
		r := &report{lane: laneController, from: actorController, to: actorQueue}
		prio := ""
		if o.Priority != 0 {
			prio = fmt.Sprintf(" (priority %d)", o.Priority)
		}
		switch {
		case o.Before.Dirty:
			r.text = "Add " + req + prio + ": already dirty, nothing to do (deduplicated)"
		case o.Before.Processing:
			r.text = "Add " + req + prio + ": being processed → marked dirty, queued again at Done"
			r.match = "dirty|" + req
		default:
			r.text = "Add " + req + prio + ": dirty, queued"
			r.match = "dirty|" + req
		}
		rc.add(in, r)
	case workqueue.OpGet:
		rc.add(in, &report{lane: laneWorker, from: actorQueue, to: actorWorker, text: "Get → " + req + ": processing"}, rc.find("dirty|"+req))
	case workqueue.OpDone:
		r := &report{lane: laneWorker, from: actorWorker, to: actorQueue, text: "Done " + req + ": finished"}
		if o.After.Dirty {
			r.text = "Done " + req + ": dirty → queued again"
			r.match = "dirty|" + req
		}
		rc.add(in, r)
	}
}

// ---- the controller's spans ----

// spanKey carries a span's description in its context.
type spanKey struct{}

// tracer is the controller's and the reconciler's client's Tracer: it reports reconciles
// (with the events they handle) and API requests.
type tracer struct{ rc *recorder }

// span is a started span.
type span struct {
	rc       *recorder
	name     string
	desc     string // an event span: "MODIFIED walk/a rv=12"; a request: "GET /api/..."
	mu       sync.Mutex
	attrs    []tracing.Attribute
	failed   bool
	ended    bool
	reconReq string
}

func attr(attrs []tracing.Attribute, key string) string {
	for i := len(attrs) - 1; i >= 0; i-- {
		if attrs[i].Key == key {
			return attrs[i].Value
		}
	}
	return ""
}

func (t tracer) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	in := t.rc.begin()
	s := &span{rc: t.rc, name: name, attrs: slices.Clone(opts.Attributes)}
	switch name {
	case tracing.SpanEvent:
		s.desc = fmt.Sprintf("%s/%s rv=%s (%s)", attr(s.attrs, tracing.AttrNamespace),
			attr(s.attrs, tracing.AttrName), attr(s.attrs, tracing.AttrResourceVersion), attr(s.attrs, tracing.AttrEventType))
	case tracing.SpanReconcile:
		req := attr(s.attrs, tracing.AttrNamespace) + "/" + attr(s.attrs, tracing.AttrName)
		s.reconReq = req
		text := "Reconcile(" + req + ")"
		var events []string
		if p, ok := ctx.Value(spanKey{}).(*span); ok && p.name == tracing.SpanEvent {
			events = append(events, p.desc)
		}
		for _, l := range opts.Links {
			if p, ok := l.Value(spanKey{}).(*span); ok && p.name == tracing.SpanEvent {
				events = append(events, p.desc)
			}
		}
		switch len(events) {
		case 0:
			text += ": no watch event behind it (an initial list, a resync, a requeue)"
		case 1:
			text += ": its trace begins at the watch event " + events[0]
		default:
			text += fmt.Sprintf(": one reconcile for %d watch events: child of %s, linked to %s", len(events), events[0], strings.Join(events[1:], ", "))
		}
		t.rc.add(in, &report{lane: laneWorker, from: actorWorker, to: actorWorker, text: text})
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

func (s *span) SetAttributes(attrs ...tracing.Attribute) {
	s.mu.Lock()
	s.attrs = append(s.attrs, attrs...)
	s.mu.Unlock()
}

func (s *span) RecordError(error) {
	s.mu.Lock()
	s.failed = true
	s.mu.Unlock()
}

func (s *span) End() {
	in := s.rc.begin()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	attrs := slices.Clone(s.attrs)
	s.mu.Unlock()
	switch {
	case s.name == tracing.SpanReconcile:
		s.rc.add(in, &report{lane: laneWorker, from: actorWorker, to: actorWorker,
			text: "Reconcile(" + s.reconReq + ") returns: " + attr(attrs, tracing.AttrResult)})
	case strings.HasPrefix(s.name, "HTTP "):
		s.rc.add(in, &report{lane: laneWorker, from: actorWorker, to: actorServer,
			text: fmt.Sprintf("%s %s → %s", attr(attrs, tracing.AttrHTTPMethod), attr(attrs, tracing.AttrURLPath), attr(attrs, tracing.AttrHTTPStatus))})
	}
}
