package apitest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// Lists: their parameters, the snapshot they read (current, exact or a continue token's),
// paging, and the waiting for a resourceVersion the server has not reached yet.

// listRequest is a list's parameters, checked.
type listRequest struct {
	f     *filter
	limit int64 // 0: no limit
	// want is the resourceVersion parameter as a number (0 for "" and "0"); exact: with
	// resourceVersionMatch=Exact.
	want  uint64
	exact bool
	// cont: a continue token was sent; tok is it decoded.
	cont bool
	tok  continueToken
	// client names the client, whose view may be held (holds.go).
	client string
}

// parseList reads and checks a list's parameters as the kube-apiserver does.
func (s *Server) parseList(r *http.Request, ri *reqInfo) (listRequest, *meta.Status) {
	q := r.URL.Query()
	var lr listRequest
	if errs := listOptionErrors(q, false); len(errs) > 0 {
		return lr, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs)
	}
	var st *meta.Status
	if lr.f, st = s.parseFilter(r, ri); st != nil {
		return lr, st
	}
	if v := q.Get("limit"); v != "" && (s.opts.NoWatchCache || !(q.Get("resourceVersion") == "0" && q.Get("continue") == "")) {
		// resourceVersion=0 is served from the watch cache, which ignores limit: the whole
		// list comes back in one page (the reflector relies on this), unless the server
		// has no watch cache (Options.NoWatchCache).
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return lr, apierr.BadRequest(fmt.Sprintf("limit: %v", err))
		}
		lr.limit = max(n, 0)
	}
	rvParam, cont := q.Get("resourceVersion"), q.Get("continue")
	lr.exact = q.Get("resourceVersionMatch") == apiclient.ResourceVersionMatchExact
	if cont != "" {
		lr.cont = true
		var err error
		if lr.tok, err = decodeContinue(cont); err != nil {
			return lr, apierr.BadRequest("invalid continue token: " + err.Error())
		}
		if rvParam != "" && rvParam != "0" {
			return lr, apierr.BadRequest("specifying resource version is not allowed when using continue")
		}
		return lr, nil
	}
	if rvParam != "" && rvParam != "0" {
		if lr.want, st = parseRV(rvParam); st != nil {
			return lr, st
		}
	}
	return lr, nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	lr, st := s.parseList(r, ri)
	if st != nil {
		writeStatus(w, st)
		return
	}
	lr.client = clientName(r)
	objs, snapRV, st := s.listSnapshot(r.Context(), ri.res, lr)
	if st != nil {
		writeStatus(w, st)
		return
	}
	out, lm := listPage(objs, snapRV, lr)
	s.respondList(w, r, ri, out, lm)
}

// listSnapshot returns the sorted objects a list reads and the resourceVersion of that
// state: the current one, a continue token's, or an exact resourceVersion's.
func (s *Server) listSnapshot(ctx context.Context, res *resource, lr listRequest) ([]*storedObj, uint64, *meta.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lr.want > s.rv && !s.waitForRVLocked(ctx, lr.want) {
		return nil, 0, apierr.TooLargeResourceVersion(lr.want, s.rv)
	}
	snapRV := max(s.viewRVLocked(lr.client, res), min(lr.want, s.rv)) // a held view (holds.go)
	switch {
	case lr.cont:
		if lr.tok.RV < res.oldestRV() || lr.tok.RV > s.rv {
			st := apierr.Expired(continueExpiredMsg)
			st.ListMeta.Continue = encodeContinue(s.rv, lr.tok.Start)
			return nil, 0, st
		}
		snapRV = lr.tok.RV
	case lr.want != 0 && lr.exact:
		if lr.want < res.oldestRV() {
			return nil, 0, apierr.Expired(fmt.Sprintf("too old resource version: %d", lr.want))
		}
		snapRV = lr.want
	}
	return res.snapshot(snapRV), snapRV, nil
}

// listPage is the page of objs (a snapshot at snapRV) that the list asks for, and its
// ListMeta: continue token and remaining count when a limit cut it.
func listPage(objs []*storedObj, snapRV uint64, lr listRequest) ([]*storedObj, meta.ListMeta) {
	f := lr.f
	lo, hi := 0, len(objs)
	if f.namespace != "" {
		// Keys are "namespace/name": the namespace is one contiguous range ('0' follows '/').
		lo = sort.Search(len(objs), func(i int) bool { return objs[i].key >= f.namespace+"/" })
		hi = sort.Search(len(objs), func(i int) bool { return objs[i].key >= f.namespace+"0" })
	}
	start := lo
	if lr.tok.Start != "" {
		start = max(lo, sort.Search(len(objs), func(i int) bool { return objs[i].key >= lr.tok.Start }))
	}
	start = min(start, hi)
	var out []*storedObj
	next := -1
	if f.empty() {
		end := hi
		if lr.limit > 0 && int64(hi-start) > lr.limit {
			end = start + int(lr.limit)
			next = end
		}
		out = objs[start:end]
	} else {
		out = make([]*storedObj, 0, min(int64(hi-start), max(lr.limit, 16)))
		for i := start; i < hi; i++ {
			if !f.matches(objs[i]) {
				continue
			}
			if lr.limit > 0 && int64(len(out)) == lr.limit {
				next = i
				break
			}
			out = append(out, objs[i])
		}
	}
	lm := meta.ListMeta{ResourceVersion: strconv.FormatUint(snapRV, 10), ShardInfo: f.shardInfo()}
	if next >= 0 {
		lm.Continue = encodeContinue(snapRV, objs[next].key)
		// The kube-apiserver counts the remaining items only when no selector filters; from
		// 1.37 a shard selector counts as one (its SelectionPredicate.Empty: apiserver
		// v0.37.2), where 1.36 ignored it and counted the rest of the collection.
		if f.empty() || (f.onlySharded() && !f.shardCounts) {
			n := int64(hi - next)
			lm.RemainingItemCount = &n
		}
	}
	return out, lm
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
