package controllertest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/meta"
)

// DefaultTimeout is the default of Options.Timeout.
const DefaultTimeout = 30 * time.Second

// Options configure an Env. The zero value is an apitest server with the built-in
// resources only, on a loopback port.
type Options struct {
	// CRDs are CustomResourceDefinition manifests installed before New returns (as
	// cmd/crdgen writes them; apitest.Server.AddCRD). Default none.
	CRDs [][]byte
	// Nodes, if set, starts simulated nodes with these options (apitest.Server.StartNodes):
	// Pods are scheduled, run and become Ready. Default none: Pods stay unscheduled.
	Nodes *apitest.NodesOptions
	// GarbageCollector, if set, starts a garbage collector of owner references with these
	// options (apitest.Server.StartGarbageCollector): dependents go with their owners.
	// Default none, as envtest: they stay.
	GarbageCollector *apitest.GCOptions
	// Server are the apitest server's options; set InMemory to run in a testing/synctest
	// bubble. Default apitest's defaults.
	Server apitest.Options
	// Timeout bounds every wait (default DefaultTimeout).
	Timeout time.Duration
	// Logger is the default logger of the Managers the Env starts (default: discard).
	Logger *slog.Logger
}

// Env is an apitest server for one test, closed when the test ends.
type Env struct {
	// Server is the apitest server.
	Server *apitest.Server
	// Nodes are the simulated nodes (nil without Options.Nodes).
	Nodes *apitest.Nodes

	t    testing.TB
	opts Options
	// managers numbers the Managers started, for their client names (running.go).
	managers int
}

// New starts an apitest server with opts' CRDs (and nodes) for the test t, and closes it
// when t ends. It fails the test if the server does not start.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := apitest.Start(opts.Server)
	if err != nil {
		t.Fatalf("controllertest: starting apitest: %v", err)
	}
	t.Cleanup(srv.Close)
	e := &Env{Server: srv, t: t, opts: opts}
	for _, crd := range opts.CRDs {
		if err := srv.AddCRD(crd); err != nil {
			t.Fatalf("controllertest: %v", err)
		}
	}
	if opts.Nodes != nil {
		if e.Nodes, err = srv.StartNodes(*opts.Nodes); err != nil {
			t.Fatalf("controllertest: %v", err)
		}
	}
	if opts.GarbageCollector != nil {
		if _, err := srv.StartGarbageCollector(*opts.GarbageCollector); err != nil {
			t.Fatalf("controllertest: %v", err)
		}
	}
	return e
}

// Wait waits until cond holds (evaluated at every change on the server), and fails the test
// after Options.Timeout, saying what it waited for.
func (e *Env) Wait(what string, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.Timeout)
	defer cancel()
	if err := e.Server.WaitFor(ctx, cond); err != nil {
		e.t.Fatalf("controllertest: waiting for %s: %v", what, err)
	}
}

// Create creates obj (a map, an apitest.Object or a struct that marshals to one) in
// resource, and fails the test on error.
func (e *Env) Create(resource string, obj any) apitest.Object {
	e.t.Helper()
	o, err := e.Server.Create(resource, obj)
	if err != nil {
		e.t.Fatalf("controllertest: creating %s: %v", resource, err)
	}
	return o
}

// Mutate changes an object with fn (apitest.Server.Mutate), and fails the test on error.
func (e *Env) Mutate(resource, namespace, name string, fn func(apitest.Object)) apitest.Object {
	e.t.Helper()
	o, err := e.Server.Mutate(resource, namespace, name, fn)
	if err != nil {
		e.t.Fatalf("controllertest: changing %s %s/%s: %v", resource, namespace, name, err)
	}
	return o
}

// Delete deletes an object (gracefully for a Pod on a simulated node), and fails the test
// on error.
func (e *Env) Delete(resource, namespace, name string) {
	e.t.Helper()
	if err := e.Server.Delete(resource, namespace, name); err != nil {
		e.t.Fatalf("controllertest: deleting %s %s/%s: %v", resource, namespace, name, err)
	}
}

// Get returns the object resource namespace/name decoded into a T (a pointer to your
// struct), and false if it does not exist; another error fails the test.
func Get[T any](e *Env, resource, namespace, name string) (T, bool) {
	e.t.Helper()
	var out T
	o, err := e.Server.Get(resource, namespace, name)
	if meta.IsNotFound(err) {
		return out, false
	} else if err != nil {
		e.t.Fatalf("controllertest: reading %s %s/%s: %v", resource, namespace, name, err)
	}
	return decode[T](e, o), true
}

// List returns the objects of resource in namespace ("" for all) decoded into Ts, in name
// order.
func List[T any](e *Env, resource, namespace string) []T {
	e.t.Helper()
	objs, _, err := e.Server.List(resource, namespace)
	if err != nil {
		e.t.Fatalf("controllertest: listing %s: %v", resource, err)
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, decode[T](e, o))
	}
	return out
}

func decode[T any](e *Env, o apitest.Object) T {
	e.t.Helper()
	var out T // a pointer type gets allocated by the decoding
	if err := o.Into(&out); err != nil {
		e.t.Fatalf("controllertest: decoding %s into %T: %v", o.Name(), out, err)
	}
	return out
}

// WaitFor waits until the object resource namespace/name exists and cond holds for it, and
// returns it; after Options.Timeout it fails the test with the object as last seen.
func WaitFor[T any](e *Env, resource, namespace, name string, cond func(T) bool) T {
	e.t.Helper()
	var last T
	var seen bool
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.Timeout)
	defer cancel()
	err := e.Server.WaitFor(ctx, func() bool {
		var ok bool
		if last, ok = Get[T](e, resource, namespace, name); ok {
			seen = true
			return cond(last)
		}
		return false
	})
	if err != nil {
		state := "it does not exist"
		if seen {
			state = "last seen: " + brief(last)
		}
		e.t.Fatalf("controllertest: waiting for %s %s/%s: %v; %s", resource, namespace, name, err, state)
	}
	return last
}

// WaitGone waits until the object resource namespace/name does not exist.
func (e *Env) WaitGone(resource, namespace, name string) {
	e.t.Helper()
	e.Wait(fmt.Sprintf("%s %s/%s to be gone", resource, namespace, name), func() bool {
		_, err := e.Server.Get(resource, namespace, name)
		return meta.IsNotFound(err)
	})
}

// Events returns the core/v1 Events about the object of kind namespace/name, oldest first.
// namespace is the object's: "" for a cluster-scoped object (a Node, a NodePool), whose
// Events an EventRecorder writes in namespace "default", as client-go's does; "default"
// finds them too, since one kind is either cluster-scoped or namespaced.
func (e *Env) Events(namespace, kind, name string) []events.Event {
	e.t.Helper()
	ns := namespace
	if ns == "" {
		ns = "default"
	}
	var out []events.Event
	for _, ev := range List[events.Event](e, "events", ns) {
		o := ev.InvolvedObject
		if o.Kind == kind && o.Name == name && (o.Namespace == namespace || namespace == "default" && o.Namespace == "") {
			out = append(out, ev)
		}
	}
	sortEvents(out)
	return out
}

// EventReasons returns the reasons of Events (see Events), oldest first.
func (e *Env) EventReasons(namespace, kind, name string) []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.Events(namespace, kind, name) {
		out = append(out, ev.Reason)
	}
	return out
}

// WaitForEvent waits for an Event with reason about the object of kind namespace/name and
// returns it. For a cluster-scoped object namespace is "" (see Events):
//
//	env.WaitForEvent("", "NodePool", "gpu", "Drained")
func (e *Env) WaitForEvent(namespace, kind, name, reason string) events.Event {
	e.t.Helper()
	var got events.Event
	var reasons []string
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.Timeout)
	defer cancel()
	err := e.Server.WaitFor(ctx, func() bool {
		reasons = reasons[:0]
		for _, ev := range e.Events(namespace, kind, name) {
			if ev.Reason == reason {
				got = ev
				return true
			}
			reasons = append(reasons, ev.Reason)
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("controllertest: waiting for a %s event about %s %s/%s: %v; its events: %s",
			reason, kind, namespace, name, err, strings.Join(reasons, ", "))
	}
	return got
}

// LeaseHolder returns the holderIdentity of the Lease namespace/name ("" if there is no
// Lease or no holder).
func (e *Env) LeaseHolder(namespace, name string) string {
	e.t.Helper()
	l, ok := Get[*lease](e, "leases", namespace, name)
	if !ok || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// WaitForLeaseHolder waits until the Lease namespace/name is held by holder.
func (e *Env) WaitForLeaseHolder(namespace, name, holder string) {
	e.t.Helper()
	e.Wait(fmt.Sprintf("lease %s/%s held by %q", namespace, name, holder), func() bool {
		return e.LeaseHolder(namespace, name) == holder
	})
}

// brief is v as JSON without managedFields, cut at 4000 bytes: what a failed wait saw.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		b, _ = json.Marshal(m)
	}
	if len(b) > 4000 {
		b = append(b[:4000], "..."...)
	}
	return string(b)
}

func sortEvents(evs []events.Event) {
	slices.SortStableFunc(evs, func(a, b events.Event) int {
		return cmp.Or(a.FirstTimestamp.Compare(b.FirstTimestamp.Time), strings.Compare(a.Name, b.Name))
	})
}

type lease struct {
	Spec struct {
		HolderIdentity *string `json:"holderIdentity"`
	} `json:"spec"`
}
