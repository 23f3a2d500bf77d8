package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/smp"
)

// Strategic merge patch (internal/smp) on the built-in kinds, by the patch strategies and
// merge keys of kubeschema's table. Custom resources do not take it (415), as on the
// kube-apiserver.

// strategicPatch applies a strategic merge patch to doc, the stored object.
func strategicPatch(r *resource, doc map[string]any, patch []byte) (map[string]any, *apiclient.Status) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		// encoding/json's message for the whole body, as the kube-apiserver's decoder.
		return nil, errBadRequest(err.Error())
	}
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	p = nil
	if err := d.Decode(&p); err != nil {
		return nil, errBadRequest(err.Error())
	}
	out, err := smp.Apply(doc, p, r.mergeType())
	if err != nil {
		switch {
		case errors.Is(err, smp.ErrBadJSONDoc), errors.Is(err, smp.ErrBadPatchFormatForPrimitiveList),
			errors.Is(err, smp.ErrBadPatchFormatForRetainKeys), errors.Is(err, smp.ErrBadPatchFormatForSetElementOrderList),
			errors.Is(err, smp.ErrUnsupported):
			return nil, errBadRequest(err.Error())
		case errors.Is(err, smp.ErrNoListOfLists), errors.Is(err, smp.ErrPatchContentNotMatchRetainKeys):
			st := newStatus(http.StatusUnprocessableEntity, apiclient.StatusReasonInvalid, "the server rejected our request due to an error in our request")
			st.Details = &apiclient.StatusDetails{}
			return nil, st
		}
		return nil, errUnknown(err.Error())
	}
	return out, nil
}

// errUnknown is the 500 of an error the kube-apiserver's handlers do not turn into a
// Status: the error's text, no reason.
func errUnknown(msg string) *apiclient.Status {
	return newStatus(http.StatusInternalServerError, "", msg)
}

// patchTypesFor are the patch media types the resource accepts, as the kube-apiserver
// lists them in its 415 (custom resources do not take strategic merge patches).
func patchTypesFor(r *resource) []apiclient.PatchType {
	if r.builtin() {
		return []apiclient.PatchType{apiclient.JSONPatchType, apiclient.MergePatchType, apiclient.StrategicMergePatchType, apiclient.ApplyPatchType}
	}
	return []apiclient.PatchType{apiclient.JSONPatchType, apiclient.MergePatchType, apiclient.ApplyPatchType}
}

// errPatchType is the 415 of a PATCH in a media type the resource does not take: the
// built-in resources' router answers it without details, custom resources list the types.
func errPatchType(r *resource) *apiclient.Status {
	if r.builtin() {
		st := newStatus(http.StatusUnsupportedMediaType, apiclient.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
		st.Details = &apiclient.StatusDetails{}
		return st
	}
	types := patchTypesFor(r)
	msg := "the body of the request was in an unknown format - accepted media types include: "
	for i, t := range types {
		if i > 0 {
			msg += ", "
		}
		msg += string(t)
	}
	return newStatus(http.StatusUnsupportedMediaType, apiclient.StatusReasonUnsupportedMediaType, msg)
}
