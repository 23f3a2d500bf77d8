package admission

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/labels"
)

// The generic registry's validation of every object's metadata.

var (
	subdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	label1035RE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
)

// The rules of names (kubeschema.Resource.Names).
const (
	NamesSubdomain   = "dns-subdomain"
	NamesLabel       = "dns-label"
	Names1035Label   = "dns-1035-label"
	NamesPathSegment = "path-segment"
)

const (
	subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	labelMsg     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	label1035Msg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

// nameErrors validates a name by rule; a rule of the kind's own (""), which apitest does
// not know, is checked as a path segment, the least every name must be.
func nameErrors(name, rule string) []apierr.FieldError {
	invalid := func(msg string) []apierr.FieldError {
		return []apierr.FieldError{apierr.InvalidValue("metadata.name", name, msg)}
	}
	var errs []apierr.FieldError
	check := func(max int, re *regexp.Regexp, msg string) {
		// As k8s.io/apimachinery's validation: the length, then the form, both reported.
		if len(name) > max {
			errs = append(errs, invalid(fmt.Sprintf("must be no more than %d characters", max))...)
		}
		if !re.MatchString(name) {
			errs = append(errs, invalid(msg)...)
		}
	}
	switch rule {
	case NamesSubdomain:
		check(253, subdomainRE, subdomainMsg)
	case NamesLabel:
		check(63, labelRE, labelMsg)
	case Names1035Label:
		check(63, label1035RE, label1035Msg)
	default:
		if name == "." || name == ".." {
			errs = append(errs, invalid(fmt.Sprintf("may not be '%s'", name))...)
		}
		for _, bad := range []string{"/", "%"} {
			if strings.Contains(name, bad) {
				errs = append(errs, invalid(fmt.Sprintf("may not contain '%s'", bad))...)
			}
		}
	}
	return errs
}

// ValidateObjectMeta validates the metadata of an object being created or updated, as
// the generic registry does for every kind: the name by the kind's rule (names: one of
// the Names constants), the labels and the finalizers.
func ValidateObjectMeta(meta map[string]any, names string) []apierr.FieldError {
	errs := nameErrors(jsonobj.Str(meta, "name"), names)
	if l, ok := meta["labels"].(map[string]any); ok {
		for k, v := range l {
			s, isStr := v.(string)
			if err := labels.ValidateKey(k); err != nil {
				errs = append(errs, apierr.InvalidValue("metadata.labels", k, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
			} else if !isStr || labels.ValidateValue(s) != nil {
				errs = append(errs, apierr.InvalidValue("metadata.labels", v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
			}
		}
	} else if meta["labels"] != nil {
		errs = append(errs, apierr.InvalidValue("metadata.labels", meta["labels"], "must be a map of strings"))
	}
	for i, f := range jsonobj.Strings(meta["finalizers"]) {
		if f != "kubernetes" && f != "orphan" && f != "foregroundDeletion" && !strings.Contains(f, "/") {
			errs = append(errs, apierr.InvalidValue(fmt.Sprintf("metadata.finalizers[%d]", i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// ValidateObjectMetaUpdate is ValidateObjectMeta for an update of an object whose stored
// metadata is old: an object being deleted (deleting) takes no new finalizers.
func ValidateObjectMetaUpdate(meta, old map[string]any, deleting bool, names string) []apierr.FieldError {
	var errs []apierr.FieldError
	if deleting {
		oldF := map[string]bool{}
		for _, f := range jsonobj.Strings(old["finalizers"]) {
			oldF[f] = true
		}
		var added []string
		for _, f := range jsonobj.Strings(meta["finalizers"]) {
			if !oldF[f] {
				added = append(added, f)
			}
		}
		if len(added) > 0 {
			errs = append(errs, apierr.ForbiddenValue("metadata.finalizers",
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added)))
		}
	}
	return append(errs, ValidateObjectMeta(meta, names)...)
}
