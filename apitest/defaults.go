package apitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Built-in kinds go through what the kube-apiserver does to a request body before storing
// it: decoding into the Go type (wrong JSON types are a 400, unknown fields are dropped with
// a warning or, with fieldValidation=Strict, a 400), defaulting (kubeschema's table, plus
// the few defaults that copy other fields), the registry strategy (strategy.go) and
// validation (validate.go). Custom resources are stored as sent.

// kindKey is the kind as kubeschema.Field.DefaultKinds names it ("v1/Pod", "apps/v1/Deployment").
func (t *ResourceType) kindKey() string {
	if t.Group == "" {
		return t.Version + "/" + t.Kind
	}
	return t.Group + "/" + t.Version + "/" + t.Kind
}

// schemaType is the kubeschema type of a built-in resource's objects (nil for others).
func (r *resource) schemaType() *kubeschema.Type {
	if !r.builtin() {
		return nil
	}
	k, _ := kubeschema.ForKind(r.typ.Group, r.typ.Version, r.typ.Kind)
	return k.Type
}

// fieldValidation is the request's fieldValidation parameter ("Ignore", "Warn", "Strict").
type fieldValidation string

// decodeTyped is the decoding step: obj becomes the JSON that Go's encoding/json writes for
// the Go struct obj unmarshals into. unknown lists the fields that were dropped ("spec.foo").
func decodeTyped(r *resource, obj map[string]any) (map[string]any, []string, *meta.Status) {
	t := r.schemaType()
	if t == nil {
		return obj, nil, nil
	}
	unknown := unknownFields(t, obj, "")
	b, err := kubeproto.Encode(t, obj)
	var out map[string]any
	if err == nil {
		out, err = kubeproto.Decode(t, b)
	}
	if err != nil {
		detail := err.Error()
		var e *kubeproto.Error
		if errors.As(err, &e) {
			detail = goJSONError(e)
		}
		return nil, nil, errCannotHandle(&r.typ, detail)
	}
	out["apiVersion"], out["kind"] = obj["apiVersion"], obj["kind"]
	return out, unknown, nil
}

// unknownFields lists the JSON fields the schema does not have, as the kube-apiserver's
// strict decoder names them.
func unknownFields(t *kubeschema.Type, obj map[string]any, path string) []string {
	var out []string
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if path == "" && (k == "apiVersion" || k == "kind") {
			continue
		}
		p := joinField(path, k)
		f := t.Field(k)
		if f == nil {
			out = append(out, p)
			continue
		}
		if f.Kind != kubeschema.Message || f.Type().JSON != "" {
			continue
		}
		v := obj[k]
		switch {
		case f.Repeated:
			l, _ := v.([]any)
			for i, e := range l {
				if m, ok := e.(map[string]any); ok {
					out = append(out, unknownFields(f.Type(), m, fmt.Sprintf("%s[%d]", p, i))...)
				}
			}
		case f.MapKey != "":
			m, _ := v.(map[string]any)
			for mk, e := range m {
				if em, ok := e.(map[string]any); ok {
					out = append(out, unknownFields(f.Type(), em, p+"."+mk)...)
				}
			}
		default:
			if m, ok := v.(map[string]any); ok {
				out = append(out, unknownFields(f.Type(), m, p)...)
			}
		}
	}
	return out
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func errCannotHandle(t *ResourceType, detail string) *meta.Status {
	return apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", t.Kind, t.Version, t.Kind, detail))
}

// goJSONError words a value of the wrong JSON type as encoding/json does:
// "json: cannot unmarshal number into Go struct field ConfigMap.data of type string".
func goJSONError(e *kubeproto.Error) string {
	if e.Field == nil || e.Field.Owner() == nil {
		return fmt.Sprintf("json: %s at %s", e.Msg, e.Path)
	}
	var what string
	switch x := e.Value.(type) {
	case string:
		what = "string"
	case bool:
		what = "bool"
	case map[string]any:
		what = "object"
	case []any:
		what = "array"
	case json.Number:
		what = "number"
		if strings.ContainsAny(string(x), ".eE") {
			what = "number " + string(x)
		}
	default:
		what = fmt.Sprintf("%T", x)
	}
	// encoding/json's path has no list indices or map keys.
	var path []string
	for _, p := range strings.Split(e.Path, ".") {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		path = append(path, p)
	}
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s",
		what, strings.TrimPrefix(e.Field.Owner().GoName(), "v1."), strings.Join(path, "."), e.Field.GoType(e.Elem))
}

// checkUnknown applies fieldValidation to the dropped fields: a 400 with Strict, warnings
// (returned) with Warn, the default.
func checkUnknown(t *ResourceType, fv string, unknown []string) ([]string, *meta.Status) {
	if len(unknown) == 0 || fv == "Ignore" {
		return nil, nil
	}
	msgs := make([]string, len(unknown))
	for i, u := range unknown {
		msgs[i] = fmt.Sprintf("unknown field %q", u)
	}
	if fv == "Strict" {
		return nil, errCannotHandle(t, "strict decoding error: "+strings.Join(msgs, ", "))
	}
	return msgs, nil
}

// validFieldValidation checks the parameter as the kube-apiserver validates the request's
// options (CreateOptions, UpdateOptions, PatchOptions).
func validFieldValidation(v, optionsKind string) *meta.Status {
	switch v {
	case "", "Ignore", "Warn", "Strict":
		return nil
	}
	return apierr.Invalid(optionsKind, "meta.k8s.io", "", []apierr.FieldError{apierr.NotSupportedValue("fieldValidation", v, "", "Ignore", "Strict", "Warn")})
}

// applyDefaults sets the table's defaults on obj (of type t) and in everything it holds,
// for an object of kind (kindKey).
func applyDefaults(t *kubeschema.Type, obj map[string]any, kind string) {
	if t.JSON != "" || obj == nil {
		return
	}
	fields := t.JSONFields()
	// Unconditional defaults first: conditions look at sibling values (a Service's
	// internalTrafficPolicy depends on its defaulted type).
	for pass := 0; pass < 2; pass++ {
		for _, f := range fields {
			if f.Default == nil || (f.DefaultWhen != "") != (pass == 1) || !unset(f, obj[f.Name]) {
				continue
			}
			if f.AppliesDefault(kind, obj) {
				var v any
				d := json.NewDecoder(strings.NewReader(string(f.Default)))
				d.UseNumber()
				d.Decode(&v)
				obj[f.Name] = v
			}
		}
	}
	for _, f := range fields {
		if f.Kind != kubeschema.Message || f.Type().JSON != "" {
			continue
		}
		switch v := obj[f.Name].(type) {
		case map[string]any:
			if f.MapKey != "" {
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						applyDefaults(f.Type(), m, kind)
					}
				}
				continue
			}
			applyDefaults(f.Type(), v, kind)
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					applyDefaults(f.Type(), m, kind)
				}
			}
		}
	}
}

// unset reports whether a field counts as not set for defaulting: absent or null, or, for a
// non-pointer scalar, its zero value (Go's defaulting tests == "" and == 0).
func unset(f *kubeschema.Field, v any) bool {
	if v == nil {
		return true
	}
	if f.Pointer || f.Repeated || f.MapKey != "" {
		return false
	}
	switch x := v.(type) {
	case string:
		return x == "" && f.Kind == kubeschema.String
	case json.Number:
		return x == "0"
	case bool:
		return !x
	}
	return false
}

// defaultWriteLocked runs the decoding, defaulting, strategy and validation of a built-in
// kind's create (old nil) or update. track, if not nil, sees the decoded and defaulted
// object before the strategy, where the kube-apiserver's field manager sees it. It returns
// the object to store, the warnings to send, or the error. s.mu is held.
func (s *Server) defaultWriteLocked(r *resource, obj, old map[string]any, fv string, track func(map[string]any)) (map[string]any, []string, *meta.Status) {
	if !r.builtin() {
		if track != nil {
			track(obj)
		}
		return obj, nil, nil
	}
	norm, unknown, st := decodeTyped(r, obj)
	if st != nil {
		return nil, nil, st
	}
	warnings, st := checkUnknown(&r.typ, fv, unknown)
	if st != nil {
		return nil, nil, st
	}
	applyDefaults(r.schemaType(), norm, r.typ.kindKey())
	derivedDefaults(r, norm)
	if track != nil {
		track(norm)
	}
	if old == nil {
		s.prepareForCreateLocked(r, norm)
	} else {
		s.prepareForUpdateLocked(r, norm, old)
	}
	// What the strategy set is Go values too: a reset status is written with its zero
	// fields ({"replicas":0}).
	if norm, _, st = decodeTyped(r, norm); st != nil {
		return nil, nil, st
	}
	if errs := validateBuiltin(r, norm, old); len(errs) > 0 {
		group := r.typ.Group
		if group == "events.k8s.io" {
			group = "" // validated as the internal core Event, and named so
		}
		return nil, nil, apierr.Invalid(r.typ.Kind, group, jsonobj.Str(jsonobj.Meta(norm), "name"), errs)
	}
	return norm, warnings, nil
}

// setWarnings adds Warning headers (RFC 7234 code 299, as the kube-apiserver sends them).
func setWarnings(w http.ResponseWriter, warnings []string) {
	for _, m := range warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", m))
	}
}

// writeOptions are a write request's options: dryRun=All, fieldValidation, and where to
// put the warnings to send (nil: nowhere, for the Go helpers); and how managedFields
// record the write (managedfields.go).
type writeOptions struct {
	dryRun          bool
	fieldValidation string
	warnings        *[]string
	// track: record the write in managedFields, for manager ("" is "unknown").
	track   bool
	manager string
	// fieldManagerParam is the request's fieldManager parameter (apply requires one).
	fieldManagerParam string
	// applied: the object's managedFields are already what to store (an apply).
	applied bool
	// force is an apply's force parameter; forceSet: the request has one.
	force, forceSet bool
}

func requestWriteOptions(r *http.Request) (writeOptions, *meta.Status) {
	fv := r.URL.Query().Get("fieldValidation")
	kind := "CreateOptions"
	switch r.Method {
	case http.MethodPut:
		kind = "UpdateOptions"
	case http.MethodPatch:
		kind = "PatchOptions"
	}
	if st := validFieldValidation(fv, kind); st != nil {
		return writeOptions{}, st
	}
	wo := writeOptions{dryRun: dryRun(r), fieldValidation: fv, warnings: new([]string)}
	if st := requestManager(r, &wo, kind); st != nil {
		return writeOptions{}, st
	}
	if f, ok := r.URL.Query()["force"]; ok && r.Method == http.MethodPatch && len(f) > 0 {
		b, err := strconv.ParseBool(f[0])
		if err != nil {
			return writeOptions{}, apierr.BadRequest(fmt.Sprintf("strconv.ParseBool: parsing %q: invalid syntax", f[0]))
		}
		wo.force, wo.forceSet = b, true
	}
	return wo, nil
}

func (wo writeOptions) warn(msgs []string) {
	if wo.warnings != nil {
		*wo.warnings = append(*wo.warnings, msgs...)
	}
}
