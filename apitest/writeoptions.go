package apitest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// The options of a write request (create, update, patch) that the write path honours.

// validFieldValidation checks the parameter as the kube-apiserver validates the request's
// options (CreateOptions, UpdateOptions, PatchOptions).
func validFieldValidation(v, optionsKind string) *meta.Status {
	switch v {
	case "", "Ignore", "Warn", "Strict":
		return nil
	}
	return apierr.Invalid(optionsKind, "meta.k8s.io", "", []apierr.FieldError{apierr.NotSupportedValue("fieldValidation", v, "", "Ignore", "Strict", "Warn")})
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
