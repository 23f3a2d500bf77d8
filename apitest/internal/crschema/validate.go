package crschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
)

// Validate checks obj against schema and returns the field errors, in the kube-apiserver's
// words ("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or
// equal to 10"). apiVersion, kind and metadata are left to the server's own checks.
func Validate(obj map[string]any, schema map[string]any) []apierr.FieldError {
	var errs []apierr.FieldError
	props, _ := schema["properties"].(map[string]any)
	for _, r := range required(schema) {
		if _, ok := obj[r]; !ok {
			errs = append(errs, apierr.RequiredValue(r, ""))
		}
	}
	for k, v := range obj {
		if k == "apiVersion" || k == "kind" || k == "metadata" {
			continue
		}
		if ps, ok := props[k].(map[string]any); ok {
			errs = append(errs, validate(k, v, ps)...)
		}
	}
	slices.SortStableFunc(errs, func(a, b apierr.FieldError) int { return compare(a.Field, b.Field) })
	return errs
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func required(s map[string]any) []string {
	var out []string
	list, _ := s["required"].([]any)
	for _, r := range list {
		if r, ok := r.(string); ok {
			out = append(out, r)
		}
	}
	return out
}

// validate checks the value v at path against s.
func validate(path string, v any, s map[string]any) []apierr.FieldError {
	if v == nil {
		if s["nullable"] == true {
			return nil
		}
		return []apierr.FieldError{apierr.TypeInvalid(path, "null", fmt.Sprintf("%s in body must be of type %s: \"null\"", path, s["type"]))}
	}
	if err, ok := checkType(path, v, s); !ok {
		return []apierr.FieldError{err}
	}
	var errs []apierr.FieldError
	if enum, ok := s["enum"].([]any); ok && !inEnum(v, enum) {
		supported := make([]string, 0, len(enum))
		for _, e := range enum {
			supported = append(supported, fmt.Sprint(e))
		}
		errs = append(errs, apierr.NotSupportedValue(path, v, supported...))
	}
	if _, ok := num(v); ok {
		errs = append(errs, checkNumber(path, v, s)...)
	}
	switch x := v.(type) {
	case string:
		errs = append(errs, checkString(path, x, s)...)
	case []any:
		errs = append(errs, checkList(path, x, s)...)
	case map[string]any:
		errs = append(errs, checkObject(path, x, s)...)
	}
	return errs
}

// checkType reports a value of another type than the schema's.
func checkType(path string, v any, s map[string]any) (apierr.FieldError, bool) {
	want, _ := s["type"].(string)
	if want == "" || s["x-kubernetes-int-or-string"] == true {
		return apierr.FieldError{}, true
	}
	got := jsonType(v)
	if got == want || want == "number" && got == "integer" {
		return apierr.FieldError{}, true
	}
	// The kube-apiserver gives the value's type as the invalid value, not the value.
	return apierr.TypeInvalid(path, got, fmt.Sprintf("%s in body must be of type %s: %q", path, want, got)), false
}

func jsonType(v any) string {
	if f, ok := goNumber(v); ok {
		v = f
	}
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case int64:
		return "integer"
	}
	return "null"
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if fmt.Sprint(e) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

func num(v any) (float64, bool) {
	if f, ok := goNumber(v); ok {
		return f, true
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// checkString reports the first of maxLength, minLength and pattern that v breaks: the
// kube-apiserver's string validator stops at the first.
func checkString(path, v string, s map[string]any) []apierr.FieldError {
	n := utf8.RuneCountInString(v)
	if m, ok := num(s["maxLength"]); ok && float64(n) > m {
		return []apierr.FieldError{{Type: "FieldValueTooLong", Field: path,
			Message: fmt.Sprintf("Too long: may not be more than %d bytes", int64(m))}}
	}
	if m, ok := num(s["minLength"]); ok && float64(n) < m {
		return []apierr.FieldError{apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be at least %d chars long", path, int64(m)))}
	}
	if p, ok := s["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil && !re.MatchString(v) {
			return []apierr.FieldError{apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should match '%s'", path, p))}
		}
	}
	return nil
}

func checkNumber(path string, v any, s map[string]any) []apierr.FieldError {
	f, _ := num(v)
	var errs []apierr.FieldError
	if m, ok := num(s["maximum"]); ok {
		if s["exclusiveMaximum"] == true && f >= m {
			errs = append(errs, apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be less than %s", path, fmtNum(m))))
		} else if f > m {
			errs = append(errs, apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be less than or equal to %s", path, fmtNum(m))))
		}
	}
	if m, ok := num(s["minimum"]); ok {
		if s["exclusiveMinimum"] == true && f <= m {
			errs = append(errs, apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be greater than %s", path, fmtNum(m))))
		} else if f < m {
			errs = append(errs, apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be greater than or equal to %s", path, fmtNum(m))))
		}
	}
	if m, ok := num(s["multipleOf"]); ok && m != 0 && math.Mod(f, m) != 0 {
		errs = append(errs, apierr.InvalidValue(path, v, fmt.Sprintf("%s in body should be a multiple of %s", path, fmtNum(m))))
	}
	return errs
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func checkList(path string, list []any, s map[string]any) []apierr.FieldError {
	var errs []apierr.FieldError
	if m, ok := num(s["maxItems"]); ok && float64(len(list)) > m {
		errs = append(errs, apierr.FieldError{Type: "FieldValueTooMany", Field: path,
			Message: fmt.Sprintf("Too many: %d: must have at most %d items", len(list), int64(m))})
	}
	if m, ok := num(s["minItems"]); ok && float64(len(list)) < m {
		errs = append(errs, apierr.InvalidValue(path, list, fmt.Sprintf("%s in body should have at least %d items", path, int64(m))))
	}
	items, _ := s["items"].(map[string]any)
	var seen []string
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if items != nil {
			errs = append(errs, validate(p, e, items)...)
		}
		if s["x-kubernetes-list-type"] == "set" {
			b, _ := json.Marshal(e)
			if slices.Contains(seen, string(b)) {
				errs = append(errs, apierr.DuplicateValue(p, e))
			}
			seen = append(seen, string(b))
		}
	}
	return errs
}

func checkObject(path string, obj map[string]any, s map[string]any) []apierr.FieldError {
	var errs []apierr.FieldError
	if m, ok := num(s["maxProperties"]); ok && float64(len(obj)) > m {
		errs = append(errs, apierr.FieldError{Type: "FieldValueTooMany", Field: path,
			Message: fmt.Sprintf("Too many: %d: must have at most %d items", len(obj), int64(m))})
	}
	if m, ok := num(s["minProperties"]); ok && float64(len(obj)) < m {
		errs = append(errs, apierr.InvalidValue(path, obj, fmt.Sprintf("%s in body should have at least %d properties", path, int64(m))))
	}
	for _, r := range required(s) {
		if _, ok := obj[r]; !ok {
			errs = append(errs, apierr.RequiredValue(path+"."+r, ""))
		}
	}
	props, _ := s["properties"].(map[string]any)
	addl, _ := s["additionalProperties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if ps, ok := props[k].(map[string]any); ok {
			errs = append(errs, validate(path+"."+k, obj[k], ps)...)
		} else if addl != nil {
			errs = append(errs, validate(path+"."+k, obj[k], addl)...)
		}
	}
	return errs
}

// goNumber reads a number written from Go (apitest's helpers take Go values: an int set by
// Mutate) as JSON would carry it.
func goNumber(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32:
		return rv.Float(), true
	}
	return 0, false
}
