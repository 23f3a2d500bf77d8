package apitest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// reqInfo is a parsed resource request.
type reqInfo struct {
	verb      Verb
	res       *resource
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
	cw := &codeWriter{ResponseWriter: w, s: s, rec: rec}
	w = cw

	ri, st := s.route(r, rec)
	s.logRequest(rec)
	s.opts.Logger.Debug("apitest request", "method", r.Method, "url", r.URL.String(), "verb", rec.Verb)
	if !s.authorized(r) {
		writeStatus(w, apierr.Unauthorized())
		return
	}
	if st != nil {
		writeStatus(w, st)
		return
	}
	if ri == nil {
		s.serveNonResource(w, r)
		return
	}
	out, st := negotiation.Negotiate(r.Header.Get("Accept"), ri.res.builtin(), ri.verb == VerbWatch)
	if st != nil {
		writeStatus(w, st)
		return
	}
	cw.out = out
	if f, ok := s.takeFailure(ri.verb, ri.res.typ.name(), rec); ok {
		s.answerFailure(w, r, f)
		return
	}
	s.delayWrite(r, ri.res)
	if ri.res.typ.createOnly != nil {
		s.handleCreateOnly(w, r, ri)
		return
	}
	if ri.sub != "" && ri.sub != "status" && ri.sub != "finalize" {
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

// codeWriter records the status code in the request log.
type codeWriter struct {
	http.ResponseWriter
	s    *Server
	rec  *Request
	done bool
	// out is the negotiated representation of the response (errors too).
	out negotiation.Output
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

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	if auth := r.Header.Get("Authorization"); auth == "Bearer "+s.opts.Token {
		return true
	}
	if isWebSocket(r) {
		// As the kube-apiserver: the token may travel as a base64url subprotocol, but only
		// next to at least one other subprotocol (the one the server echoes).
		var token string
		tokens, others := 0, 0
		for _, p := range websocketProtocols(r) {
			if enc, ok := strings.CutPrefix(p, "base64url.bearer.authorization.k8s.io."); ok {
				tokens++
				dec, err := base64.RawURLEncoding.DecodeString(enc)
				if err != nil {
					return false
				}
				token = string(dec)
				continue
			}
			others++
		}
		return tokens == 1 && others > 0 && token == s.opts.Token
	}
	return false
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
	for _, x := range s.order {
		if x.typ.Group == group && x.typ.Version == version && x.typ.Plural == plural {
			res = x
			break
		}
	}
	s.mu.Unlock()
	if res == nil {
		return nil, apierr.NoResource()
	}
	rec.Resource = res.typ.name()
	ri.res = res
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

func dryRun(r *http.Request) bool {
	for _, v := range r.URL.Query()["dryRun"] {
		if v == "All" {
			return true
		}
	}
	return false
}

func readBody(r *http.Request) ([]byte, *meta.Status) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, apierr.BadRequest("reading the request body: " + err.Error())
	}
	if len(b) > maxBody {
		return nil, apierr.New(http.StatusRequestEntityTooLarge, meta.StatusReasonRequestEntityTooLarge, "the request is too large")
	}
	return b, nil
}

// readObject reads a request body in the media type of its Content-Type (JSON by default)
// into the JSON form: 415 for a media type the resource cannot read, 400 for a body that
// does not decode.
func readObject(r *http.Request, res *resource) (map[string]any, *meta.Status) {
	b, st := readBody(r)
	if st != nil {
		return nil, st
	}
	return negotiation.DecodeObject(r.Header.Get("Content-Type"), b, res.typ.Kind, res.mediaTypes())
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	s.mu.Lock()
	o := ri.res.objects[objectKey(ri.namespace, ri.name)]
	s.mu.Unlock()
	if o == nil {
		writeStatus(w, errNotFound(&ri.res.typ, ri.name))
		return
	}
	s.respondObject(w, r, ri, http.StatusOK, o)
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	obj, st := readObject(r, ri.res)
	if st != nil {
		writeStatus(w, st)
		return
	}
	wo, st := requestWriteOptions(r)
	if st != nil {
		writeStatus(w, st)
		return
	}
	s.mu.Lock()
	o, st := s.createLocked(ri.res, ri.namespace, obj, wo)
	s.mu.Unlock()
	if st != nil {
		writeStatus(w, st)
		return
	}
	setWarnings(w, *wo.warnings)
	s.notifyChange()
	s.respondObject(w, r, ri, http.StatusCreated, o)
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	mode := updateMain
	if ri.sub == "status" {
		mode = updateStatus
	}
	var body []byte
	var obj map[string]any
	var st *meta.Status
	if ri.verb == VerbPatch {
		if body, st = readBody(r); st != nil {
			writeStatus(w, st)
			return
		}
	} else if obj, st = readObject(r, ri.res); st != nil {
		writeStatus(w, st)
		return
	}
	pt := apiclient.PatchType(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	wo, st := requestWriteOptions(r)
	if st != nil {
		writeStatus(w, st)
		return
	}
	s.mu.Lock()
	var o *storedObj
	created := false
	if ri.verb == VerbPatch {
		o, created, st = s.patchLocked(ri.res, ri.namespace, ri.name, pt, body, mode, wo)
	} else {
		o, created, st = s.updateLocked(ri.res, ri.namespace, ri.name, obj, mode, wo)
	}
	s.mu.Unlock()
	if st != nil {
		writeStatus(w, st)
		return
	}
	setWarnings(w, *wo.warnings)
	s.notifyChange()
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.respondObject(w, r, ri, code, o)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	var opts deleteOptions
	if b, st := readBody(r); st != nil {
		writeStatus(w, st)
		return
	} else if len(strings.TrimSpace(string(b))) > 0 {
		if st := decodeDeleteOptions(r, b, &opts); st != nil {
			writeStatus(w, st)
			return
		}
	}
	applyDeleteQuery(r, &opts)
	s.mu.Lock()
	o, deleted, st := s.deleteLocked(ri.res, ri.namespace, ri.name, opts, dryRun(r) || contains(opts.DryRun, "All"))
	s.mu.Unlock()
	if st != nil {
		writeStatus(w, st)
		return
	}
	s.notifyChange()
	if !deleted {
		// Finalizers hold the object: the kube-apiserver answers 200 with the object
		// (202 is only for graceful deletion, which apitest does not do).
		s.respondObject(w, r, ri, http.StatusOK, o)
		return
	}
	if ri.res.typ.Group == "" && ri.res.typ.Plural == "namespaces" {
		s.respondObject(w, r, ri, http.StatusOK, o)
		return
	}
	writeBody(w, outputOf(w), http.StatusOK, mustJSON(&meta.Status{
		TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Success",
		Details:  &meta.StatusDetails{Name: ri.name, Group: ri.res.typ.Group, Kind: ri.res.typ.Plural, UID: o.uid},
	}))
}

func applyDeleteQuery(r *http.Request, opts *deleteOptions) {
	q := r.URL.Query()
	if v := q.Get("propagationPolicy"); v != "" {
		opts.PropagationPolicy = &v
	}
	if v := q.Get("gracePeriodSeconds"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			opts.GracePeriodSeconds = &n
		}
	}
}

func (s *Server) handleDeleteCollection(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	f, st := s.parseFilter(r, ri)
	if st != nil {
		writeStatus(w, st)
		return
	}
	var opts deleteOptions
	if b, _ := readBody(r); len(strings.TrimSpace(string(b))) > 0 {
		if st := decodeDeleteOptions(r, b, &opts); st != nil {
			writeStatus(w, st)
			return
		}
	}
	// As the kube-apiserver: list, delete each listed object, and answer the list as it was
	// before the deletions.
	s.mu.Lock()
	rv := s.rv
	var out []*storedObj
	for _, k := range ri.res.sortedKeys() {
		o := ri.res.objects[k]
		if o != nil && f.matches(o) {
			if _, _, st := s.deleteLocked(ri.res, o.namespace, o.name, opts, dryRun(r)); st == nil {
				out = append(out, o)
			}
		}
	}
	s.mu.Unlock()
	s.notifyChange()
	s.respondList(w, r, ri, out, meta.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)})
}

// continueToken is the decoded form of a list continue token.
type continueToken struct {
	V     string `json:"v"`
	RV    uint64 `json:"rv"`
	Start string `json:"start"`
}

func encodeContinue(rv uint64, start string) string {
	b, _ := json.Marshal(continueToken{V: "meta.k8s.io/v1", RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	if t.V != "meta.k8s.io/v1" {
		return t, fmt.Errorf("continue key is not valid: server does not recognize this encoding (%s)", t.V)
	}
	return t, nil
}

const continueExpiredMsg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

func listOptionErrors(q map[string][]string, watch bool) []apierr.FieldError {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	rv, match, cont := get("resourceVersion"), get("resourceVersionMatch"), get("continue")
	_, hasSIE := q["sendInitialEvents"]
	var errs []apierr.FieldError
	if !watch {
		if match != "" {
			if rv == "" {
				errs = append(errs, apierr.ForbiddenValue("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
			}
			if cont != "" {
				errs = append(errs, apierr.ForbiddenValue("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
			}
			if match != apiclient.ResourceVersionMatchExact && match != apiclient.ResourceVersionMatchNotOlderThan {
				errs = append(errs, apierr.FieldError{Type: "FieldValueNotSupported", Field: "resourceVersionMatch",
					Message: fmt.Sprintf("Unsupported value: %q: supported values: \"Exact\", \"NotOlderThan\", \"\"", match)})
			}
			if match == apiclient.ResourceVersionMatchExact && rv == "0" {
				errs = append(errs, apierr.ForbiddenValue("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
			}
		}
		if hasSIE {
			errs = append(errs, apierr.ForbiddenValue("sendInitialEvents", "sendInitialEvents is forbidden for list"))
		}
		return errs
	}
	if hasSIE && match != apiclient.ResourceVersionMatchNotOlderThan {
		errs = append(errs, apierr.ForbiddenValue("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
	}
	if match != "" {
		if !hasSIE {
			errs = append(errs, apierr.ForbiddenValue("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != apiclient.ResourceVersionMatchNotOlderThan {
			errs = append(errs, apierr.FieldError{Type: "FieldValueNotSupported", Field: "resourceVersionMatch",
				Message: fmt.Sprintf("Unsupported value: %q: supported values: \"NotOlderThan\"", match)})
		}
	}
	return errs
}

func parseRV(s string) (uint64, *meta.Status) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, apierr.BadRequest(fmt.Sprintf("invalid resource version: %s", s))
	}
	return n, nil
}

// waitForRV waits (up to TooLargeResourceVersionWait) until the server's RV reaches want.
// It returns with s.mu held, and false if the RV never came.
func (s *Server) waitForRVLocked(ctx context.Context, want uint64) bool {
	if want <= s.rv {
		return true
	}
	if s.opts.TooLargeResourceVersionWait < 0 {
		return false
	}
	timer := time.NewTimer(s.opts.TooLargeResourceVersionWait)
	defer timer.Stop()
	for want > s.rv {
		ch := s.rvChangedLocked()
		s.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			s.mu.Lock()
			return want <= s.rv
		case <-ctx.Done():
			s.mu.Lock()
			return want <= s.rv
		}
		s.mu.Lock()
	}
	return true
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	q := r.URL.Query()
	if errs := listOptionErrors(q, false); len(errs) > 0 {
		writeStatus(w, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs))
		return
	}
	f, st := s.parseFilter(r, ri)
	if st != nil {
		writeStatus(w, st)
		return
	}
	var limit int64
	if v := q.Get("limit"); v != "" && (s.opts.NoWatchCache || !(q.Get("resourceVersion") == "0" && q.Get("continue") == "")) {
		// resourceVersion=0 is served from the watch cache, which ignores limit: the whole
		// list comes back in one page (the reflector relies on this), unless the server
		// has no watch cache (Options.NoWatchCache).
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeStatus(w, apierr.BadRequest(fmt.Sprintf("limit: %v", err)))
			return
		}
		limit = max(n, 0)
	}
	rvParam, match, cont := q.Get("resourceVersion"), q.Get("resourceVersionMatch"), q.Get("continue")
	var tok continueToken
	if cont != "" {
		var err error
		if tok, err = decodeContinue(cont); err != nil {
			writeStatus(w, apierr.BadRequest("invalid continue token: "+err.Error()))
			return
		}
		if rvParam != "" && rvParam != "0" {
			writeStatus(w, apierr.BadRequest("specifying resource version is not allowed when using continue"))
			return
		}
	}
	var want uint64
	if rvParam != "" && rvParam != "0" && cont == "" {
		if want, st = parseRV(rvParam); st != nil {
			writeStatus(w, st)
			return
		}
	}
	res := ri.res
	s.mu.Lock()
	if want > s.rv && !s.waitForRVLocked(r.Context(), want) {
		cur := s.rv
		s.mu.Unlock()
		writeStatus(w, apierr.TooLargeResourceVersion(want, cur))
		return
	}
	snapRV := s.rv
	switch {
	case cont != "":
		if tok.RV < res.oldestRV() || tok.RV > s.rv {
			cur := s.rv
			s.mu.Unlock()
			st := apierr.Expired(continueExpiredMsg)
			st.ListMeta.Continue = encodeContinue(cur, tok.Start)
			writeStatus(w, st)
			return
		}
		snapRV = tok.RV
	case want != 0 && match == apiclient.ResourceVersionMatchExact:
		if want < res.oldestRV() {
			s.mu.Unlock()
			writeStatus(w, apierr.Expired(fmt.Sprintf("too old resource version: %d", want)))
			return
		}
		snapRV = want
	}
	objs := res.snapshot(snapRV)
	s.mu.Unlock()

	lo, hi := 0, len(objs)
	if f.namespace != "" {
		// Keys are "namespace/name": the namespace is one contiguous range ('0' follows '/').
		lo = sort.Search(len(objs), func(i int) bool { return objs[i].key >= f.namespace+"/" })
		hi = sort.Search(len(objs), func(i int) bool { return objs[i].key >= f.namespace+"0" })
	}
	start := lo
	if tok.Start != "" {
		start = max(lo, sort.Search(len(objs), func(i int) bool { return objs[i].key >= tok.Start }))
	}
	start = min(start, hi)
	var out []*storedObj
	next := -1
	if f.empty() {
		end := hi
		if limit > 0 && int64(hi-start) > limit {
			end = start + int(limit)
			next = end
		}
		out = objs[start:end]
	} else {
		out = make([]*storedObj, 0, min(int64(hi-start), max(limit, 16)))
		for i := start; i < hi; i++ {
			if !f.matches(objs[i]) {
				continue
			}
			if limit > 0 && int64(len(out)) == limit {
				next = i
				break
			}
			out = append(out, objs[i])
		}
	}
	lm := meta.ListMeta{ResourceVersion: strconv.FormatUint(snapRV, 10), ShardInfo: f.shardInfo()}
	if next >= 0 {
		lm.Continue = encodeContinue(snapRV, objs[next].key)
		// The kube-apiserver counts the remaining items when no label or field selector
		// filters, also under a shard selector (its SelectionPredicate.Empty ignores the
		// shard selector: apiserver v0.36.3), so the count is of the rest of the collection.
		if f.empty() || f.onlySharded() {
			n := int64(hi - next)
			lm.RemainingItemCount = &n
		}
	}
	s.respondList(w, r, ri, out, lm)
}

// decodeDeleteOptions reads a DeleteOptions body in JSON, YAML or protobuf (client-go's
// typed clients send it in protobuf).
func decodeDeleteOptions(r *http.Request, b []byte, opts *deleteOptions) *meta.Status {
	m, st := negotiation.Decode(r.Header.Get("Content-Type"), b, []string{negotiation.MediaJSON, negotiation.MediaYAML, negotiation.MediaProtobuf})
	if st != nil {
		return st
	}
	j, _ := json.Marshal(m)
	if err := json.Unmarshal(j, opts); err != nil {
		return apierr.BadRequest("the DeleteOptions body does not decode: " + err.Error())
	}
	return nil
}
