package apitest

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/apitest/internal/ssa"
	"github.com/informerkit/informerkit/meta"
)

// Server-side apply (application/apply-patch+yaml): the configuration is merged into the
// object by internal/ssa's field manager, which checks it against the other managers'
// fields and records the applier's in managedFields; the result is then created or
// updated as any write is (defaults, strategy, validation).

// applyLocked serves an apply of body to ns/name through mode's endpoint. created reports
// that the apply created the object.
func (s *Server) applyLocked(r *resource, ns, name string, body []byte, mode updateMode, wo writeOptions) (*storedObj, bool, *meta.Status) {
	config, err := negotiation.DecodeYAML(body)
	if err != nil {
		if !s.rel.checksPatchBodies() {
			return nil, false, apierr.BadRequest(fmt.Sprintf("error decoding YAML: error converting YAML to JSON: %v", err))
		}
		return nil, false, apierr.BadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if config == nil {
		config = map[string]any{}
	}
	old := r.objects[objectKey(ns, name)]
	var live map[string]any
	if old != nil {
		live = mustDecode(old.raw)
	} else if mode != updateMain {
		// A subresource never creates its object.
		return nil, false, errNotFound(&r.typ, name)
	}
	out, _, err := r.fieldManager(subOf(mode)).Apply(live, config, wo.manager, wo.force)
	if err != nil {
		return nil, false, applyStatus(err)
	}
	if got := jsonobj.Str(jsonobj.Meta(out), "name"); got != name {
		return nil, false, apierr.BadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", got, name))
	}
	wo.applied = true
	if old == nil {
		o, st := s.createLocked(r, ns, out, wo)
		return o, st == nil, st
	}
	o, _, st := s.updateLocked(r, ns, name, out, mode, wo)
	return o, false, st
}

// applyStatus is the kube-apiserver's answer to a failed apply: 409 with a cause per
// conflicting field, or the error's status.
func applyStatus(err error) *meta.Status {
	var ce *ssa.ConflictError
	if errors.As(err, &ce) {
		st := apierr.New(http.StatusConflict, meta.StatusReasonConflict, ce.Error())
		causes := make([]meta.StatusCause, 0, len(ce.Conflicts))
		for _, c := range ce.Conflicts {
			causes = append(causes, meta.StatusCause{Type: "FieldManagerConflict", Message: "conflict with " + c.Manager.String(), Field: c.Path.String()})
		}
		st.Details = &meta.StatusDetails{Causes: causes}
		return st
	}
	var ae *ssa.ApplyError
	if errors.As(err, &ae) && ae.Code == http.StatusBadRequest {
		return apierr.BadRequest(ae.Message)
	}
	return apierr.Unknown(err.Error())
}
