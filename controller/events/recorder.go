package events

import (
	"fmt"
	"maps"
	"time"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// EventRecorder records events about objects (client-go's record.EventRecorder). *Recorder
// implements it; code that records events can accept the interface.
type EventRecorder interface {
	// Event records an event of eventType (Normal or Warning) about obj. reason is a short
	// CamelCase word for programs, message is for humans. It never blocks and never fails:
	// the event is written in the background, or dropped and counted.
	Event(obj meta.Object, eventType, reason, message string)
	// Eventf is Event with a formatted message.
	Eventf(obj meta.Object, eventType, reason, messageFmt string, args ...any)
	// AnnotatedEventf is Eventf with annotations on the Event object.
	AnnotatedEventf(obj meta.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any)
}

// Recorder records the events of one component (its source and reportingController) on a
// Broadcaster. It is safe for concurrent use.
type Recorder struct {
	b         *Broadcaster
	component string
}

var _ EventRecorder = (*Recorder)(nil)

// NewRecorder returns a recorder whose events name component as their source and
// reporting controller (a controller's name: "deployment-controller").
func (b *Broadcaster) NewRecorder(component string) *Recorder {
	return &Recorder{b: b, component: component}
}

// Event implements EventRecorder.
func (r *Recorder) Event(obj meta.Object, eventType, reason, message string) {
	r.record(obj, nil, eventType, reason, message)
}

// Eventf implements EventRecorder.
func (r *Recorder) Eventf(obj meta.Object, eventType, reason, messageFmt string, args ...any) {
	r.record(obj, nil, eventType, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf implements EventRecorder.
func (r *Recorder) AnnotatedEventf(obj meta.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any) {
	r.record(obj, annotations, eventType, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *Recorder) record(obj meta.Object, annotations map[string]string, eventType, reason, message string) {
	e, err := r.makeEvent(obj, annotations, eventType, reason, message)
	if err != nil {
		r.b.recorded.Add(1)
		r.b.rejected.Add(1)
		r.b.log.Error("event not recorded", "err", err, "type", eventType, "reason", reason, "message", message)
		return
	}
	r.b.enqueue(e)
}

// makeEvent builds the Event: the object's kind and apiVersion from the registry, the
// rest from its metadata. Events about cluster-scoped objects go to namespace "default",
// as client-go's do.
func (r *Recorder) makeEvent(obj meta.Object, annotations map[string]string, eventType, reason, message string) (*Event, error) {
	if obj == nil {
		return nil, fmt.Errorf("events: nil object")
	}
	if eventType != Normal && eventType != Warning {
		return nil, fmt.Errorf("events: event type %q is neither %s nor %s", eventType, Normal, Warning)
	}
	info, err := r.b.opts.Registry.InfoOf(obj)
	if err != nil {
		return nil, fmt.Errorf("events: the kind of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	ref := ObjectReference{
		Kind:            info.Kind,
		APIVersion:      info.APIVersion(),
		Namespace:       obj.GetNamespace(),
		Name:            obj.GetName(),
		ResourceVersion: obj.GetResourceVersion(),
	}
	if u, ok := obj.(interface{ GetUID() string }); ok {
		ref.UID = u.GetUID()
	}
	ns := ref.Namespace
	if ns == "" {
		ns = "default"
	}
	now := time.Now()
	t := meta.NewTime(now)
	return &Event{
		TypeMeta: kinds.Event.TypeMeta(),
		ObjectMeta: meta.ObjectMeta{
			Name:        eventName(ref.Name, now),
			Namespace:   ns,
			Annotations: maps.Clone(annotations),
		},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              Source{Component: r.component},
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                eventType,
		ReportingController: r.component,
		ReportingInstance:   r.b.opts.Instance,
	}, nil
}
