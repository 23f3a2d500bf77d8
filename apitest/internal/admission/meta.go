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
)

const (
	subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	labelMsg     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

// ValidateObjectMeta validates the metadata of an object being created or updated, as
// the generic registry does for every kind: the name (a DNS-1123 label when nameIsLabel,
// as for namespaces, else a subdomain), the labels and the finalizers.
func ValidateObjectMeta(meta map[string]any, nameIsLabel bool) []apierr.FieldError {
	var errs []apierr.FieldError
	name := jsonobj.Str(meta, "name")
	if nameIsLabel {
		if len(name) > 63 || !labelRE.MatchString(name) {
			errs = append(errs, apierr.InvalidValue("metadata.name", name, labelMsg))
		}
	} else if len(name) > 253 || !subdomainRE.MatchString(name) {
		errs = append(errs, apierr.InvalidValue("metadata.name", name, subdomainMsg))
	}
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
func ValidateObjectMetaUpdate(meta, old map[string]any, deleting, nameIsLabel bool) []apierr.FieldError {
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
	return append(errs, ValidateObjectMeta(meta, nameIsLabel)...)
}
