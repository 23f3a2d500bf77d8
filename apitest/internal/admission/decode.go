package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Decoding: what the kube-apiserver's decoder makes of a body of a built-in kind.

// decodeTyped is the decoding step: obj becomes the JSON that Go's encoding/json writes for
// the Go struct obj unmarshals into. unknown lists the fields that were dropped ("spec.foo").
func decodeTyped(gvk meta.GroupVersionKind, t *kubeschema.Type, obj map[string]any) (map[string]any, []string, *meta.Status) {
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
		return nil, nil, errCannotHandle(gvk, detail)
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

func errCannotHandle(gvk meta.GroupVersionKind, detail string) *meta.Status {
	return apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", gvk.Kind, gvk.Version, gvk.Kind, detail))
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
func checkUnknown(gvk meta.GroupVersionKind, fv string, unknown []string) ([]string, *meta.Status) {
	if len(unknown) == 0 || fv == "Ignore" {
		return nil, nil
	}
	msgs := make([]string, len(unknown))
	for i, u := range unknown {
		msgs[i] = fmt.Sprintf("unknown field %q", u)
	}
	if fv == "Strict" {
		return nil, errCannotHandle(gvk, "strict decoding error: "+strings.Join(msgs, ", "))
	}
	return msgs, nil
}
