package meta

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/labels"
)

// LabelSelector selects objects by their labels, as a field of a custom resource's spec
// (metav1.LabelSelector): every pair of MatchLabels and every requirement of
// MatchExpressions must hold. An empty LabelSelector selects everything, a nil one
// nothing. cmd/crdgen writes its schema.
type LabelSelector struct {
	// MatchLabels are labels an object must have, with these values.
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions are requirements on an object's labels.
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one requirement of a LabelSelector: Key's value In (or
// NotIn) Values, or the label Exists (DoesNotExist), without Values.
type LabelSelectorRequirement struct {
	Key      string                `json:"key"`
	Operator LabelSelectorOperator `json:"operator"`
	Values   []string              `json:"values,omitempty"`
}

// LabelSelectorOperator relates a requirement's key to its values.
type LabelSelectorOperator string

// The operators of a LabelSelectorRequirement.
const (
	LabelSelectorOpIn           LabelSelectorOperator = "In"
	LabelSelectorOpNotIn        LabelSelectorOperator = "NotIn"
	LabelSelectorOpExists       LabelSelectorOperator = "Exists"
	LabelSelectorOpDoesNotExist LabelSelectorOperator = "DoesNotExist"
)

// Validate checks the selector as the kube-apiserver checks the selectors of built-in
// objects, and returns FieldErrors in its words, under path (the selector's field,
// "spec.selector"), or nil:
//
//	spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'
//
// A nil selector is valid.
func (s *LabelSelector) Validate(path string) error {
	if s == nil {
		return nil
	}
	var errs FieldErrors
	ml := fieldPath(path, "matchLabels")
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		for _, msg := range qualifiedNameErrors(k) {
			errs = append(errs, &FieldError{Type: FieldValueInvalid, Field: ml, BadValue: k, Detail: msg})
		}
		for _, msg := range labelValueErrors(s.MatchLabels[k]) {
			errs = append(errs, &FieldError{Type: FieldValueInvalid, Field: ml, BadValue: s.MatchLabels[k], Detail: msg})
		}
	}
	for i, r := range s.MatchExpressions {
		p := fieldPath(path, "matchExpressions") + "[" + strconv.Itoa(i) + "]"
		switch r.Operator {
		case LabelSelectorOpIn, LabelSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, &FieldError{Type: FieldValueRequired, Field: p + ".values", Detail: "must be specified when `operator` is 'In' or 'NotIn'"})
			}
		case LabelSelectorOpExists, LabelSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, &FieldError{Type: FieldValueForbidden, Field: p + ".values", Detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"})
			}
		default:
			errs = append(errs, &FieldError{Type: FieldValueInvalid, Field: p + ".operator", BadValue: string(r.Operator), Detail: "not a valid selector operator"})
		}
		for _, msg := range qualifiedNameErrors(r.Key) {
			errs = append(errs, &FieldError{Type: FieldValueInvalid, Field: p + ".key", BadValue: r.Key, Detail: msg})
		}
		for j, v := range r.Values {
			for _, msg := range labelValueErrors(v) {
				errs = append(errs, &FieldError{Type: FieldValueInvalid, Field: p + ".values[" + strconv.Itoa(j) + "]", BadValue: v, Detail: msg})
			}
		}
	}
	return errs.OrNil()
}

// AsSelector returns the selector as a labels.Selector, to match labels or to list with
// (client.ListOptions.LabelSelector): labels.Nothing for a nil selector, labels.Everything
// for an empty one. An invalid selector gives Validate's FieldErrors (paths relative to
// the selector).
func (s *LabelSelector) AsSelector() (labels.Selector, error) {
	if s == nil {
		return labels.Nothing(), nil
	}
	if err := s.Validate(""); err != nil {
		return labels.Selector{}, err
	}
	ops := map[LabelSelectorOperator]labels.Operator{
		LabelSelectorOpIn: labels.In, LabelSelectorOpNotIn: labels.NotIn,
		LabelSelectorOpExists: labels.Exists, LabelSelectorOpDoesNotExist: labels.DoesNotExist,
	}
	reqs := make([]labels.Requirement, 0, len(s.MatchLabels)+len(s.MatchExpressions))
	for _, r := range s.MatchExpressions {
		req, err := labels.NewRequirement(r.Key, ops[r.Operator], r.Values)
		if err != nil {
			return labels.Selector{}, fmt.Errorf("meta: label selector: %w", err) // Validate let it through: a bug
		}
		reqs = append(reqs, req)
	}
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		req, err := labels.NewRequirement(k, labels.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return labels.Selector{}, fmt.Errorf("meta: label selector: %w", err)
		}
		reqs = append(reqs, req)
	}
	return labels.NewSelector(reqs...), nil
}

// Matches reports whether an object with these labels is selected; an invalid selector
// matches nothing (validate it first to tell the user).
func (s *LabelSelector) Matches(objLabels map[string]string) bool {
	sel, err := s.AsSelector()
	return err == nil && sel.Matches(objLabels)
}

// The kube-apiserver's (apimachinery's util/validation) formats and messages for label keys
// and values, so that errors read as its own.
const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
)

var (
	qualifiedNameRe    = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRe       = regexp.MustCompile("^(" + qualifiedNameFmt + ")?$")
	dns1123SubdomainRe = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
)

// regexMsg writes msg with its examples and the regular expression, as the apiserver does.
func regexMsg(msg, format string, examples ...string) string {
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

// qualifiedNameErrors checks a label key: an optional DNS subdomain prefix and "/", then a
// name of at most 63 characters.
func qualifiedNameErrors(v string) []string {
	var errs []string
	parts := strings.Split(v, "/")
	name := parts[len(parts)-1]
	switch {
	case len(parts) == 2:
		prefix := parts[0]
		switch {
		case prefix == "":
			errs = append(errs, "prefix part must be non-empty")
		case len(prefix) > 253:
			errs = append(errs, "prefix part must be no more than 253 bytes")
		case !dns1123SubdomainRe.MatchString(prefix):
			errs = append(errs, "prefix part "+regexMsg(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
		}
	case len(parts) > 2:
		return []string{"a valid label key " + regexMsg(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part must be no more than 63 bytes")
	}
	if !qualifiedNameRe.MatchString(name) {
		errs = append(errs, "name part "+regexMsg(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// labelValueErrors checks a label value: empty, or at most 63 characters of a name.
func labelValueErrors(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, "must be no more than 63 bytes")
	}
	if !labelValueRe.MatchString(v) {
		errs = append(errs, regexMsg(labelValueErrMsg, "("+qualifiedNameFmt+")?", "MyValue", "my_value", "12345"))
	}
	return errs
}
