package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/smp"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Strategic merge patch (internal/smp) on the built-in kinds, by the patch strategies and
// merge keys of kubeschema's table. Custom resources do not take it (415), as on the
// kube-apiserver.

// strategicPatch applies a strategic merge patch to doc, the stored object.
func strategicPatch(r *resource, doc map[string]any, patch []byte) (map[string]any, *meta.Status) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		// encoding/json's message for the whole body, as the kube-apiserver's decoder.
		return nil, apierr.BadRequest(err.Error())
	}
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	p = nil
	if err := d.Decode(&p); err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	out, err := smp.Apply(doc, p, r.mergeType())
	if err == nil {
		if t := r.schemaType(); t != nil {
			if _, perr := kubeproto.Encode(t, out); perr != nil {
				var e *kubeproto.Error
				if errors.As(perr, &e) && e.Field != nil {
					// The patched object does not convert to the kind's Go type: the
					// kube-apiserver's converter's words, about the whole patch.
					return nil, apierr.Invalid("", "", "", []apierr.FieldError{apierr.InvalidValue("patch", fmt.Sprintf("%+v", p), converterError(e))})
				}
			}
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, smp.ErrBadJSONDoc), errors.Is(err, smp.ErrBadPatchFormatForPrimitiveList),
			errors.Is(err, smp.ErrBadPatchFormatForRetainKeys), errors.Is(err, smp.ErrBadPatchFormatForSetElementOrderList),
			errors.Is(err, smp.ErrUnsupported):
			return nil, apierr.BadRequest(err.Error())
		case errors.Is(err, smp.ErrNoListOfLists), errors.Is(err, smp.ErrPatchContentNotMatchRetainKeys):
			st := apierr.New(http.StatusUnprocessableEntity, meta.StatusReasonInvalid, "the server rejected our request due to an error in our request")
			st.Details = &meta.StatusDetails{}
			return nil, st
		}
		return nil, apierr.Unknown(err.Error())
	}
	return out, nil
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
func errPatchType(r *resource) *meta.Status {
	if r.builtin() {
		st := apierr.New(http.StatusUnsupportedMediaType, meta.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
		st.Details = &meta.StatusDetails{}
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
	return apierr.New(http.StatusUnsupportedMediaType, meta.StatusReasonUnsupportedMediaType, msg)
}

// converterError words a value of the wrong type as k8s.io/apimachinery's unstructured
// converter does when it fills the kind's Go type from the patched object.
func converterError(e *kubeproto.Error) string {
	src := "string"
	switch x := e.Value.(type) {
	case bool:
		src = "bool"
	case map[string]any:
		src = "map"
	case []any:
		src = "slice"
	case json.Number:
		src = "int64"
		if _, err := x.Int64(); err != nil {
			src = "float64"
		}
	case int64:
		src = "int64"
	case float64:
		src = "float64"
	}
	f := e.Field
	switch {
	case !e.Elem && f.Repeated:
		if f.Kind == kubeschema.Bytes {
			break
		}
		return "cannot restore slice from " + src
	case !e.Elem && f.MapKey != "":
		return "cannot restore map from " + src
	}
	var dst string
	switch f.Kind {
	case kubeschema.Message:
		if f.Type() != nil && f.Type().JSON == "" {
			return "cannot restore struct from: " + src
		}
		return fmt.Sprintf("cannot convert %s to %s", src, f.GoType(true))
	case kubeschema.Bytes:
		return "cannot restore slice from " + src
	case kubeschema.String:
		dst = "string"
	case kubeschema.Bool:
		dst = "bool"
	default:
		dst = string(f.Kind)
	}
	// Go converts integers to strings (as runes) and numbers to each other; the converter
	// refuses the first and a fraction to an integer, and cannot handle the rest.
	switch {
	case src == "int64" && dst == "string", src == "float64" && (dst == "int32" || dst == "int64"):
		return fmt.Sprintf("cannot convert %s to %s", src, dst)
	}
	return "unrecognized type: " + dst
}
