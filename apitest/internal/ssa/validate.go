package ssa

import (
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Validating an applied configuration against the schema.

// ValidationError is what is wrong with an applied configuration, worded as the
// kube-apiserver words it.
type ValidationError struct {
	Path    string
	Message string
}

// ValidationErrors are the errors of one configuration.
type ValidationErrors []ValidationError

// Error renders the errors as the kube-apiserver does ("errors:" and one per line when
// there are several).
func (e ValidationErrors) Error() string {
	line := func(v ValidationError) string {
		if v.Path == "" {
			return v.Message
		}
		return v.Path + ": " + v.Message
	}
	if len(e) == 1 {
		return line(e[0])
	}
	parts := []string{"errors:"}
	for _, v := range e {
		parts = append(parts, "  "+line(v))
	}
	return strings.Join(parts, "\n")
}

// Validate checks an applied configuration against t: declared fields only (where the
// schema takes no others), scalars of the declared JSON types, list items with their keys
// and without repeats.
func Validate(v any, t mergeschema.Type) ValidationErrors {
	var errs ValidationErrors
	validate(v, t, "", &errs)
	return errs
}

func validate(v any, t mergeschema.Type, path string, errs *ValidationErrors) {
	add := func(msg string) { *errs = append(*errs, ValidationError{Path: path, Message: msg}) }
	if v == nil {
		return
	}
	switch mergeschema.KindOf(t) {
	case mergeschema.Deduced:
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				validate(x[k], nil, path+"."+k, errs)
			}
		}
		return
	case mergeschema.Scalar:
		switch t.ScalarKind() {
		case mergeschema.String:
			if _, ok := v.(string); !ok {
				add(fmt.Sprintf("expected string, got &value.valueUnstructured{Value:%#v}", goValue(v)))
			}
		case mergeschema.Numeric:
			if !isNumber(v) {
				add(fmt.Sprintf("expected numeric (int or float), got %T", goValue(v)))
			}
		case mergeschema.Boolean:
			if _, ok := v.(bool); !ok {
				add(fmt.Sprintf("expected boolean, got &{%v}", goValue(v)))
			}
		default:
			switch v.(type) {
			case map[string]any, []any:
				add(fmt.Sprintf("expected any scalar, got &{%v}", goValue(v)))
			}
		}
		return
	case mergeschema.List:
		l, ok := v.([]any)
		if !ok {
			add(fmt.Sprintf("expected list, got &{%v}", goValue(v)))
			return
		}
		seen := map[string]bool{}
		for i, it := range l {
			name := fmt.Sprintf("[%d]", i)
			if !t.Atomic() {
				pe, err := itemElement(t, it)
				if err != nil {
					add(fmt.Sprintf("element %d: %v", i, err))
					return
				}
				k := fieldpath.SerializeElement(pe)
				if seen[k] {
					add("duplicate entries for key " + pe.String())
				}
				seen[k] = true
				name = pe.String()
			}
			validate(it, t.Elem(), path+name, errs)
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		add(fmt.Sprintf("expected map, got &{%v}", goValue(v)))
		return
	}
	for _, k := range sortedKeys(m) {
		ft, declared := fieldType(t, k)
		if !declared && mergeschema.KindOf(t) == mergeschema.Struct && t.Elem() == nil {
			*errs = append(*errs, ValidationError{Path: path + "." + k, Message: "field not declared in schema"})
			return
		}
		validate(m[k], ft, path+"."+k, errs)
	}
}

func isNumber(v any) bool {
	switch fieldpath.Normalize(v).(type) {
	case int64, float64:
		return true
	}
	return false
}

// goValue is v as Go's %#v shows what the kube-apiserver decoded (int64, float64,
// string, bool, map[string]interface {}, []interface {}).
func goValue(v any) any { return fieldpath.Normalize(v) }
