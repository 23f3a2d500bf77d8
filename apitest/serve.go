package apitest

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// Every request goes through serveHTTP: recorded, authenticated, routed to its resource
// and verb, negotiated, possibly failed by an injected fault, then handled.

// reqInfo is a parsed resource request.
type reqInfo struct {
	verb      Verb
	res       *resource
	version   string // the version the request names (a CRD may serve several)
	namespace string
	name      string
	sub       string
	rec       *Request
}

const maxBody = 8 << 20

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.track.addHandler() {
		writeStatus(w, apierr.New(http.StatusServiceUnavailable, meta.StatusReasonServiceUnavailable, "apitest server is closing"))
		return
	}
	defer s.track.doneHandler()

	rec := &Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
		ContentType: r.Header.Get("Content-Type"), UserAgent: r.UserAgent(), Protocol: r.Proto}
	if isWebSocket(r) {
		rec.Protocol = "websocket"
	}
	cw := s.responseWriter(w, r, rec)
	defer cw.cz.finish()
	w = cw

	ri, st := s.route(r, rec)
	s.logRequest(rec)
	s.opts.Logger.Debug("apitest request", "method", r.Method, "url", r.URL.String(), "verb", rec.Verb)
	if s.refuseDead(w, r) {
		return // a killed client (clients.go)
	}
	user, ok := s.authenticate(r)
	if !ok {
		writeStatus(w, apierr.Unauthorized())
		return
	}
	r = withUser(r, user)
	if st == errPageNotFound {
		pageNotFound(w)
		return
	}
	if st != nil {
		writeStatus(w, st)
		return
	}
	if st := s.authorizeRequest(r, user, ri); st != nil {
		writeStatus(w, st)
		return
	}
	if ri == nil {
		s.serveNonResource(w, r)
		return
	}
	out, st := negotiation.NegotiateCBOR(r.Header.Get("Accept"), ri.res.builtin(), ri.verb == VerbWatch, s.opts.CBOR)
	if st != nil {
		writeStatus(w, st)
		return
	}
	cw.out = out
	if st := s.forbidden(ri); st != nil {
		writeStatus(w, st)
		return
	}
	if f, ok := s.takeFailure(ri.verb, ri.res.typ.name(), ri.sub, rec); ok {
		if f.cut == nil {
			s.answerFailure(w, r, f)
			return
		}
		cut := &cutWriter{ResponseWriter: w, rule: *f.cut}
		w = cut
		defer cut.finish()
	}
	w, finish, answered := s.interceptWrite(w, r, ri) // the client's write hook (clients.go)
	if answered {
		return
	}
	if finish != nil {
		defer finish()
	}
	s.delayWrite(r, ri.res)
	if ri.res.typ.createOnly != nil {
		s.handleCreateOnly(w, r, ri)
		return
	}
	if ri.sub != "" && ri.sub != "status" && ri.sub != "finalize" && ri.sub != "approval" {
		s.handleSubresource(w, r, ri)
		return
	}
	switch ri.verb {
	case VerbGet:
		s.handleGet(w, r, ri)
	case VerbList:
		s.handleList(w, r, ri)
	case VerbWatch:
		s.handleWatch(w, r, ri)
	case VerbCreate:
		s.handleCreate(w, r, ri)
	case VerbUpdate, VerbPatch:
		s.handleUpdate(w, r, ri)
	case VerbDelete:
		s.handleDelete(w, r, ri)
	case VerbDeleteCollection:
		s.handleDeleteCollection(w, r, ri)
	default:
		writeStatus(w, apierr.MethodNotAllowed())
	}
}

// responseWriter is the writer a request is answered through: it records the status and
// compresses the body (compress.go) when the client accepts gzip; the caller defers
// cz.finish.
func (s *Server) responseWriter(w http.ResponseWriter, r *http.Request, rec *Request) *codeWriter {
	cz := newCompressWriter(w)
	if acceptsGzip(r) && !isWebSocket(r) {
		cz.mode = compressThreshold // a watch switches to its own mode (startChunked)
	}
	return &codeWriter{ResponseWriter: cz, s: s, rec: rec, cz: cz}
}

// codeWriter records the status code in the request log.
type codeWriter struct {
	http.ResponseWriter
	s    *Server
	rec  *Request
	done bool
	// out is the negotiated representation of the response (errors too).
	out negotiation.Output
	// cz compresses the response (compress.go).
	cz *compressWriter
}

func (c *codeWriter) WriteHeader(code int) {
	if !c.done {
		c.done = true
		c.s.setRequestCode(c.rec, code)
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeWriter) Write(b []byte) (int, error) {
	if !c.done {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush, hijack).
func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Hijack lets the WebSocket upgrader take the connection.
func (c *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

func (c *codeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// route parses the path into a resource request (nil for non-resource paths).
func (s *Server) route(r *http.Request, rec *Request) (*reqInfo, *meta.Status) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group, version string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		version, rest = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, version, rest = parts[1], parts[2], parts[3:]
	default:
		rec.Verb = VerbNonResource
		return nil, nil
	}
	if len(rest) == 0 {
		rec.Verb = VerbNonResource
		return nil, nil
	}
	ri := &reqInfo{rec: rec}
	if rest[0] == "namespaces" && len(rest) >= 3 && !(len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize")) {
		ri.namespace = rest[1]
		rest = rest[2:]
	}
	plural := rest[0]
	if len(rest) > 1 {
		ri.name = rest[1]
	}
	if len(rest) > 2 {
		ri.sub = strings.Join(rest[2:], "/")
	}
	rec.Namespace, rec.Name, rec.Subresource = ri.namespace, ri.name, ri.sub
	rec.Verb = verbFor(r, ri.name != "")
	s.mu.Lock()
	var res *resource
	groupVersionServed := group == ""
	for _, x := range s.order {
		if x.typ.Group == group && x.serves(version) {
			groupVersionServed = true
			if x.typ.Plural == plural {
				res = x
				break
			}
		}
	}
	s.mu.Unlock()
	if res == nil {
		if !groupVersionServed {
			// As the kube-apiserver: a group/version nobody serves (a deleted CRD's) is
			// left to the mux, whose answer is a plain-text 404.
			return nil, errPageNotFound
		}
		return nil, apierr.NoResource()
	}
	rec.Resource = res.typ.name()
	ri.res = res
	ri.version = version
	ri.verb = rec.Verb
	if ri.namespace != "" && !res.typ.Namespaced {
		return nil, apierr.NoResource()
	}
	if ri.sub != "" {
		sub, ok := res.typ.subresource(ri.sub)
		if !ok {
			return nil, apierr.NoResource()
		}
		if r.Method == http.MethodPost {
			ri.verb, rec.Verb = VerbCreate, VerbCreate
		}
		if !contains(sub.verbs, string(ri.verb)) {
			return nil, apierr.MethodNotAllowed()
		}
		return ri, nil
	}
	if ri.name == "" && ri.namespace == "" && res.typ.Namespaced && ri.verb != VerbList && ri.verb != VerbWatch {
		return nil, apierr.MethodNotAllowed()
	}
	if !res.typ.allows(ri.verb) {
		return nil, apierr.MethodNotAllowed()
	}
	return ri, nil
}

// errPageNotFound is route's answer for a group/version that is not served: pageNotFound
// writes it.
var errPageNotFound = &meta.Status{Code: http.StatusNotFound, Reason: meta.StatusReasonNotFound, Message: "404 page not found"}

// pageNotFound is the kube-apiserver's answer to a path no handler serves: Go's mux's
// plain-text 404.
func pageNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte("404 page not found\n"))
}

func verbFor(r *http.Request, named bool) Verb {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
			return VerbWatch
		}
		if named {
			return VerbGet
		}
		return VerbList
	case http.MethodPost:
		if named {
			return Verb("post")
		}
		return VerbCreate
	case http.MethodPut:
		return VerbUpdate
	case http.MethodPatch:
		return VerbPatch
	case http.MethodDelete:
		if named {
			return VerbDelete
		}
		return VerbDeleteCollection
	}
	return Verb(strings.ToLower(r.Method))
}

func (s *Server) delayWrite(r *http.Request, res *resource) {
	d := s.writeDelay(res)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}
