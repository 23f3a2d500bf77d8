package apitest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Verb is the Kubernetes verb of a request.
type Verb string

// The verbs of the request log. VerbAny in a filter matches every verb.
const (
	VerbAny              Verb = ""
	VerbGet              Verb = "get"
	VerbList             Verb = "list"
	VerbWatch            Verb = "watch"
	VerbCreate           Verb = "create"
	VerbUpdate           Verb = "update"
	VerbPatch            Verb = "patch"
	VerbDelete           Verb = "delete"
	VerbDeleteCollection Verb = "deletecollection"
	// VerbNonResource is discovery, /version and anything that is not a resource path.
	VerbNonResource Verb = "nonresource"
)

// Request is one request as the server saw it.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq  int64
	Time time.Time
	Verb Verb
	// Resource is the resource's name in apitest form: "configmaps", "deployments.apps".
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// Query holds the query parameters (resourceVersion, limit, continue, labelSelector,
	// allowWatchBookmarks, sendInitialEvents, timeoutSeconds, ...).
	Query url.Values
	// Code is the HTTP status the server answered (0 while it has not answered; a watch
	// records 200 when its stream starts, and 101 for WebSocket; CodeDropped for a request
	// dropped without an answer).
	Code        int
	Method      string
	Path        string
	ContentType string
	UserAgent   string
	// Protocol is "HTTP/1.1", "HTTP/2.0" or "websocket".
	Protocol string
}

// Param returns the first value of the query parameter key ("" if absent).
func (r Request) Param(key string) string { return r.Query.Get(key) }

// HasParam reports whether the query parameter key was sent.
func (r Request) HasParam(key string) bool { _, ok := r.Query[key]; return ok }

func (s *Server) logRequest(rec *Request) {
	s.logMu.Lock()
	s.reqSeq++
	rec.Seq = s.reqSeq
	s.requests = append(s.requests, rec)
	if len(s.requests) > s.opts.RequestLogSize {
		s.requests = s.requests[len(s.requests)-s.opts.RequestLogSize:]
	}
	s.notifyChangeLogLocked()
	s.logMu.Unlock()
}

func (s *Server) setRequestCode(rec *Request, code int) {
	s.logMu.Lock()
	rec.Code = code
	s.notifyChangeLogLocked()
	s.logMu.Unlock()
}

// RequestFilter selects requests; zero fields match anything.
type RequestFilter struct {
	Verb Verb
	// Resource is any name of a served resource ("configmaps", "cm", "deployments.apps",
	// the Kind), as Request.Resource names it or otherwise; "pods/status" selects a
	// subresource, as Subresource does. Without a subresource, requests of the resource's
	// subresources match too.
	Resource string
	// Subresource selects requests of one subresource ("status", "scale").
	Subresource string
	Namespace   string
	Name        string
	// After keeps only requests with Seq > After.
	After int64
}

func (f RequestFilter) match(r *Request) bool {
	return (f.Verb == VerbAny || r.Verb == f.Verb) &&
		(f.Resource == "" || r.Resource == f.Resource) && (f.Subresource == "" || r.Subresource == f.Subresource) &&
		(f.Namespace == "" || r.Namespace == f.Namespace) &&
		(f.Name == "" || r.Name == f.Name) && r.Seq > f.After
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request { return s.RequestsMatching(RequestFilter{}) }

// RequestsFor returns the logged requests of one verb (VerbAny: all) and resource
// ("" : all), e.g. s.RequestsFor(apitest.VerbList, "configmaps").
func (s *Server) RequestsFor(verb Verb, resource string) []Request {
	return s.RequestsMatching(RequestFilter{Verb: verb, Resource: resource})
}

// RequestsMatching returns the logged requests that match f.
func (s *Server) RequestsMatching(f RequestFilter) []Request {
	f.Resource, f.Subresource = s.canonicalRef(f.Resource, f.Subresource)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if f.match(r) {
			c := *r
			c.Query = cloneValues(r.Query)
			out = append(out, c)
		}
	}
	return out
}

// CountRequests returns how many logged requests have the verb and resource.
func (s *Server) CountRequests(verb Verb, resource string) int {
	f := RequestFilter{Verb: verb}
	f.Resource, f.Subresource = s.canonicalRef(resource, "")
	s.logMu.Lock()
	defer s.logMu.Unlock()
	n := 0
	for _, r := range s.requests {
		if f.match(r) {
			n++
		}
	}
	return n
}

// LastRequestSeq returns the Seq of the newest request (0 if none), to use as
// RequestFilter.After: "what happened after this point".
func (s *Server) LastRequestSeq() int64 {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.reqSeq
}

// ClearRequests empties the request log (sequence numbers keep growing).
func (s *Server) ClearRequests() {
	s.logMu.Lock()
	s.requests = nil
	s.logMu.Unlock()
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// notifyChange wakes everything waiting in WaitFor.
func (s *Server) notifyChange() {
	s.logMu.Lock()
	s.notifyChangeLogLocked()
	s.logMu.Unlock()
}

func (s *Server) notifyChangeLocked() { s.notifyChange() }

// rvChangedLocked returns a channel closed at the next change (s.mu held).
func (s *Server) rvChangedLocked() <-chan struct{} { return s.changedChan() }

// canonicalRef is canonical for a filter's resource, which may end in "/subresource"
// (sub, if set, wins).
func (s *Server) canonicalRef(ref, sub string) (string, string) {
	name, refSub, _ := strings.Cut(ref, "/")
	if sub == "" {
		sub = refSub
	}
	return s.canonical(name), sub
}

// resolveRef resolves a fault's resource: a name lookupLocked knows, with an optional
// "/subresource" the resource serves.
func (s *Server) resolveRef(ref string) (name, sub string, err error) {
	n, sub, _ := strings.Cut(ref, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.lookupLocked(n)
	if err != nil {
		return "", "", err
	}
	if sub != "" {
		if _, ok := res.typ.subresource(sub); !ok {
			return "", "", fmt.Errorf("apitest: resource %s has no subresource %q", res.typ.name(), sub)
		}
	}
	return res.typ.name(), sub, nil
}

// canonical maps a resource alias ("cm", "deployments") to its apitest name; unknown names
// are returned unchanged.
func (s *Server) canonical(name string) string {
	if name == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, err := s.lookupLocked(name); err == nil && r != nil {
		return r.typ.name()
	}
	return name
}

func (s *Server) notifyChangeLogLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) changedChan() <-chan struct{} {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.changed
}

// WaitFor blocks until cond returns true or ctx is done. cond is evaluated now and again
// after every change the server sees (a request, a response code, a write, a watch opening
// or closing, a fault), so no polling interval is involved. cond may call Server methods.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		ch := s.changedChan()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitForRequest waits until a request matching f has been logged (including one logged
// before the call) and returns the first such.
func (s *Server) WaitForRequest(ctx context.Context, f RequestFilter) (Request, error) {
	var got Request
	err := s.WaitFor(ctx, func() bool {
		rs := s.RequestsMatching(f)
		if len(rs) > 0 {
			got = rs[0]
			return true
		}
		return false
	})
	return got, err
}

// WaitForRequests waits until at least n requests match f and returns them.
func (s *Server) WaitForRequests(ctx context.Context, f RequestFilter, n int) ([]Request, error) {
	var got []Request
	err := s.WaitFor(ctx, func() bool {
		got = s.RequestsMatching(f)
		return len(got) >= n
	})
	return got, err
}
