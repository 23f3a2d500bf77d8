package apitest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// The handlers of get, create, update, patch, delete and deletecollection (lists are
// list.go's, watches watchhttp.go's, subresources subresources.go's).

// dryRun reports dryRun=All.
func dryRun(r *http.Request) bool {
	for _, v := range r.URL.Query()["dryRun"] {
		if v == "All" {
			return true
		}
	}
	return false
}

// readBody reads a request body of at most maxBody bytes (413 beyond).
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
	if obj, st = writtenAt(ri.res, ri.version, obj, wo); st != nil {
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
	switch ri.sub {
	case "status":
		mode = updateStatus
	case "approval":
		mode = updateApproval
		if st := s.mayApprove(requestUser(r), ri); st != nil {
			writeStatus(w, st)
			return
		}
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
	if obj != nil {
		if obj, st = writtenAt(ri.res, ri.version, obj, wo); st != nil {
			writeStatus(w, st)
			return
		}
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
	if v := q.Get("orphanDependents"); v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			opts.OrphanDependents = &b
		}
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
	applyDeleteQuery(r, &opts)
	// As the kube-apiserver: list, delete each listed object, and answer the list as it was
	// before the deletions. dryRun counts from the query or the body, as for one delete.
	dry := dryRun(r) || contains(opts.DryRun, "All")
	s.mu.Lock()
	rv := s.rv
	var out []*storedObj
	for _, k := range ri.res.sortedKeys() {
		o := ri.res.objects[k]
		if o != nil && f.matches(o) {
			if _, _, st := s.deleteLocked(ri.res, o.namespace, o.name, opts, dry); st == nil {
				out = append(out, o)
			}
		}
	}
	s.mu.Unlock()
	s.notifyChange()
	s.respondList(w, r, ri, out, meta.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)})
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
