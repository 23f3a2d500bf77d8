package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/admission"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/printers"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/meta"
)

// The CustomResourceDefinition lifecycle, as the kube-apiserver's apiextensions controllers
// and custom resource handler carry it out (checked against v1.36.3 by e2e's
// TestCRDLifecycleFidelity):
//
//   - create: the CRD is stored without conditions; then NamesAccepted=True (NoConflicts)
//     with Established=False (Installing); then Established=True (InitialNamesAccepted),
//     and its served versions are served and listed by discovery. apitest makes the two
//     status updates right after the create, before answering it.
//   - a change of the spec (a version served or not, a schema, the names): the resource is
//     served as the new spec says at once; its open watches end cleanly
//     CRDWatchTeardownDelay later (the kube-apiserver rebuilds the resource's storage), and a
//     watch or list from a resourceVersion before the change gets 410 "too old resource
//     version" (the new storage's watch cache starts at the change).
//   - delete: the CRD gets deletionTimestamp, the customresourcecleanup finalizer and
//     Terminating=True (InstanceDeletionPending), then InstanceDeletionInProgress; creates of
//     its resource are refused (403); every custom resource is deleted (those with
//     finalizers get a deletionTimestamp and go when their finalizers do); once none is
//     left the CRD is deleted, discovery drops the resource, its requests answer
//     "404 page not found", and its open watches end cleanly CRDWatchTeardownDelay later.
//     The kube-apiserver checks for remaining instances every 5 s; apitest at once.

const (
	crdGroup            = "apiextensions.k8s.io"
	crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
	// DefaultCRDWatchTeardownDelay is the default of Options.CRDWatchTeardownDelay: the
	// kube-apiserver's custom resource handler waits a second before it destroys a storage
	// it replaced or removed, which ends that storage's watches.
	DefaultCRDWatchTeardownDelay = time.Second
)

// crdObject is the part of a stored CustomResourceDefinition the lifecycle reads.
type crdObject struct {
	Metadata struct {
		Name              string   `json:"name"`
		DeletionTimestamp string   `json:"deletionTimestamp"`
		Finalizers        []string `json:"finalizers"`
	} `json:"metadata"`
	Spec   crdSpec `json:"spec"`
	Status struct {
		Conditions    []crdCondition `json:"conditions"`
		AcceptedNames crdNames       `json:"acceptedNames"`
	} `json:"status"`
}

type crdSpec struct {
	Group    string       `json:"group"`
	Scope    string       `json:"scope"`
	Names    crdNames     `json:"names"`
	Versions []crdVersion `json:"versions"`
}

type crdNames struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

type crdVersion struct {
	Name         string `json:"name"`
	Served       bool   `json:"served"`
	Storage      bool   `json:"storage"`
	Subresources struct {
		Status *struct{} `json:"status"`
	} `json:"subresources"`
	Schema struct {
		OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
	} `json:"schema"`
	AdditionalPrinterColumns []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Format      string `json:"format"`
		Description string `json:"description"`
		Priority    int    `json:"priority"`
		JSONPath    string `json:"jsonPath"`
	} `json:"additionalPrinterColumns"`
}

// columns are the version's printer columns, for its Tables.
func (v crdVersion) columns() []printers.CustomColumn {
	var out []printers.CustomColumn
	for _, c := range v.AdditionalPrinterColumns {
		out = append(out, printers.CustomColumn{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description,
			Priority: c.Priority, JSONPath: c.JSONPath})
	}
	return out
}

type crdCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

func (c *crdObject) condition(typ string) (status, reason string) {
	for _, x := range c.Status.Conditions {
		if x.Type == typ {
			return x.Status, x.Reason
		}
	}
	return "", ""
}

func (c *crdObject) storage() (crdVersion, bool) {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v, true
		}
	}
	return crdVersion{}, false
}

func (c *crdObject) servedVersions() []string {
	var out []string
	for _, v := range c.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	slices.SortFunc(out, compareKubeVersions)
	return out
}

func decodeCRD(raw []byte) (*crdObject, error) {
	var c crdObject
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// admitCRD validates a CustomResourceDefinition about to be written and fills in what the
// kube-apiserver defaults: conversion, singular, listKind and, on create, the initial status.
func admitCRD(obj, old map[string]any) *meta.Status {
	create := old == nil
	raw, _ := json.Marshal(obj)
	c, err := decodeCRD(raw)
	if err != nil {
		return apierr.BadRequest(err.Error())
	}
	name := c.Metadata.Name
	var errs []apierr.FieldError
	sp := c.Spec
	if sp.Group == "" {
		errs = append(errs, apierr.RequiredValue("spec.group", ""))
	}
	if sp.Names.Plural == "" {
		errs = append(errs, apierr.RequiredValue("spec.names.plural", ""))
	}
	if sp.Names.Kind == "" {
		errs = append(errs, apierr.RequiredValue("spec.names.kind", ""))
	}
	if want := sp.Names.Plural + "." + sp.Group; name != "" && sp.Names.Plural != "" && name != want {
		errs = append(errs, apierr.InvalidValue("metadata.name", name, `must be spec.names.plural+"."+spec.group`))
	}
	if sp.Scope != "Namespaced" && sp.Scope != "Cluster" {
		errs = append(errs, apierr.NotSupportedValue("spec.scope", sp.Scope, "Cluster", "Namespaced"))
	}
	storage := 0
	for _, v := range sp.Versions {
		if v.Storage {
			storage++
		}
	}
	if len(sp.Versions) == 0 {
		errs = append(errs, apierr.RequiredValue("spec.versions", ""))
	} else if storage != 1 {
		errs = append(errs, apierr.InvalidValue("spec.versions", sp.Versions, "must have exactly one version marked as storage version"))
	}
	errs = append(errs, crdRuleErrors(obj, old)...)
	if len(errs) > 0 {
		return apierr.Invalid("CustomResourceDefinition", crdGroup, name, errs)
	}
	spec := jsonobj.Map(obj["spec"])
	if jsonobj.Map(spec["conversion"]) == nil {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	names := jsonobj.Map(spec["names"])
	if jsonobj.Str(names, "singular") == "" {
		names["singular"] = strings.ToLower(sp.Names.Kind)
	}
	if jsonobj.Str(names, "listKind") == "" {
		names["listKind"] = sp.Names.Kind + "List"
	}
	if create {
		st, _ := c.storage()
		obj["status"] = map[string]any{"conditions": nil, "acceptedNames": map[string]any{"plural": "", "kind": ""},
			"storedVersions": []any{st.Name}}
	}
	return nil
}

// crdCommittedLocked is the lifecycle's reaction to a committed change of a
// CustomResourceDefinition (commitLocked calls it): it makes the status updates the
// kube-apiserver's controllers would, and serves, re-serves or removes the resource.
func (s *Server) crdCommittedLocked(typ apiclient.EventType, o *storedObj) {
	if typ == apiclient.Deleted {
		return // finishCRDLocked removed the resource before the CRD went
	}
	c, err := decodeCRD(o.raw)
	if err != nil {
		return
	}
	if c.Metadata.DeletionTimestamp != "" {
		s.crdDeletingLocked(o, c)
		return
	}
	if conflict := s.nameConflictLocked(c); conflict != "" {
		if st, _ := c.condition("NamesAccepted"); st != "False" {
			s.setCRDConditionsLocked(o, nil,
				condition("NamesAccepted", "False", "NameConflict", conflict),
				condition("Established", "False", "NotAccepted", "not all names are accepted"))
		}
		return
	}
	names := c.Spec.Names
	if st, _ := c.condition("NamesAccepted"); st != "True" || !sameNames(c.Status.AcceptedNames, names) {
		conds := []map[string]any{condition("NamesAccepted", "True", "NoConflicts", "no conflicts found")}
		if st, _ := c.condition("Established"); st != "True" {
			conds = append(conds, condition("Established", "False", "Installing", "the initial names have been accepted"))
		}
		s.setCRDConditionsLocked(o, &names, conds...)
		return
	}
	if st, _ := c.condition("Established"); st != "True" {
		s.setCRDConditionsLocked(o, nil, condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted"))
		return
	}
	s.serveCRDLocked(c)
}

func sameNames(a, b crdNames) bool {
	return a.Plural == b.Plural && a.Kind == b.Kind && a.Singular == b.Singular && a.ListKind == b.ListKind &&
		slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}

func condition(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "lastTransitionTime": nowString(), "reason": reason, "message": message}
}

// setCRDConditionsLocked commits a status update of the CRD o: the conditions conds (a
// condition keeps its lastTransitionTime when its status does not change) and, if names is
// set, the accepted names.
func (s *Server) setCRDConditionsLocked(o *storedObj, names *crdNames, conds ...map[string]any) {
	obj := mustDecode(o.raw)
	status := jsonobj.Map(obj["status"])
	if status == nil {
		status = map[string]any{}
		obj["status"] = status
	}
	if names != nil {
		n, _ := toMap(names)
		status["acceptedNames"] = n
	}
	existing, _ := status["conditions"].([]any)
	for _, c := range conds {
		replaced := false
		for i, e := range existing {
			em, _ := e.(map[string]any)
			if em["type"] != c["type"] {
				continue
			}
			if em["status"] == c["status"] {
				c["lastTransitionTime"] = em["lastTransitionTime"]
			}
			existing[i] = c
			replaced = true
		}
		if !replaced {
			existing = append(existing, c)
		}
	}
	status["conditions"] = existing
	s.commitLocked(s.crdRes, apiclient.Modified, obj, o)
}

// nameConflictLocked returns why the CRD's names cannot be accepted: its plural or kind is
// used in its group by another resource ("" if none is).
func (s *Server) nameConflictLocked(c *crdObject) string {
	for _, r := range s.order {
		if r.removed || r.typ.Group != c.Spec.Group || r.crd == c.Metadata.Name {
			continue
		}
		if r.typ.Plural == c.Spec.Names.Plural {
			return fmt.Sprintf("%q is already in use", c.Spec.Names.Plural)
		}
		if r.typ.Kind == c.Spec.Names.Kind {
			return fmt.Sprintf("%q is already in use", c.Spec.Names.Kind)
		}
	}
	return ""
}

// serveCRDLocked serves the resource of an established CRD as its spec says, registering it
// the first time and rebuilding its "storage" when the spec changed.
func (s *Server) serveCRDLocked(c *crdObject) {
	sv, ok := c.storage()
	if !ok {
		return
	}
	names := c.Status.AcceptedNames
	t := ResourceType{Group: c.Spec.Group, Version: sv.Name, Kind: names.Kind, Plural: names.Plural, Singular: names.Singular,
		ShortNames: names.ShortNames, Categories: names.Categories, Namespaced: c.Spec.Scope != "Cluster",
		StatusSubresource: sv.Subresources.Status != nil, OpenAPIV3Schema: sv.Schema.OpenAPIV3Schema, generation: true, custom: true,
		// The apiextensions server converts field labels itself: any field but metadata.name
		// and metadata.namespace is "field label not supported", as for pods.
		labels: selector.Labels{Refusal: selector.RefusalNotSupported}, names: admission.NamesSubdomain, columns: sv.columns()}
	spec, _ := json.Marshal(c.Spec)
	served := c.servedVersions()
	r := s.crdResourceLocked(c.Metadata.Name)
	if r == nil {
		r = newResource(t, s.opts.HistorySize, s.rv)
		r.crd, r.crdSpec, r.served = c.Metadata.Name, spec, served
		s.registerLocked(r)
		return
	}
	if bytes.Equal(r.crdSpec, spec) {
		return
	}
	// A new storage: what the kube-apiserver's handler does when the spec changes. Requests
	// see the new spec at once; the old storage's watches end after the teardown delay, and
	// its history is gone (a watch from before the change gets 410).
	r.typ, r.crdSpec, r.served = t, spec, served
	r.mergeOnce, r.merge = sync.Once{}, nil
	r.celOnce, r.cel = sync.Once{}, nil
	r.compactedRV = s.rv
	s.teardownWatchesLocked(r)
	s.openapi = nil
	s.notifyChangeLocked()
}

// crdResourceLocked returns the resource served for the CRD name (nil if none is).
func (s *Server) crdResourceLocked(name string) *resource {
	for _, r := range s.order {
		if r.crd == name {
			return r
		}
	}
	return nil
}

// crdBeforeDeleteLocked is the CRD's deletion as the kube-apiserver's CRD storage makes it:
// deletionTimestamp, the cleanup finalizer and Terminating=True (InstanceDeletionPending)
// in one update, whatever other finalizers the CRD has.
func (s *Server) crdBeforeDeleteLocked(old *storedObj) (*storedObj, *meta.Status) {
	obj := mustDecode(old.raw)
	md := jsonobj.Meta(obj)
	md["deletionTimestamp"] = nowString()
	fins, _ := md["finalizers"].([]any)
	if !slices.Contains(fins, any(crdCleanupFinalizer)) {
		md["finalizers"] = append(fins, crdCleanupFinalizer)
	}
	status := jsonobj.Map(obj["status"])
	if status == nil {
		status = map[string]any{}
		obj["status"] = status
	}
	conds, _ := status["conditions"].([]any)
	status["conditions"] = append(conds, condition("Terminating", "True", "InstanceDeletionPending",
		"CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"))
	o, err := s.commitLocked(s.crdRes, apiclient.Modified, obj, old)
	if err != nil {
		return nil, apierr.Internal(err.Error())
	}
	return o, nil
}

// crdDeletingLocked carries a deleted CRD through the finalizer's steps.
func (s *Server) crdDeletingLocked(o *storedObj, c *crdObject) {
	if !slices.Contains(c.Metadata.Finalizers, crdCleanupFinalizer) {
		return
	}
	if _, reason := c.condition("Terminating"); reason == "InstanceDeletionPending" {
		s.setCRDConditionsLocked(o, nil, condition("Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"))
		return
	}
	r := s.crdResourceLocked(c.Metadata.Name)
	if r == nil {
		s.finishCRDLocked(c.Metadata.Name, nil)
		return
	}
	if r.terminating {
		return
	}
	r.terminating = true
	for _, key := range slices.Clone(r.sortedKeys()) {
		if x := r.objects[key]; x != nil && !r.removed {
			s.deleteLocked(r, x.namespace, x.name, deleteOptions{}, false)
		}
	}
	s.maybeFinishCRDLocked(r)
}

// maybeFinishCRDLocked finishes the deletion of r's CRD once r holds no object.
func (s *Server) maybeFinishCRDLocked(r *resource) {
	if r.terminating && !r.removed && len(r.objects) == 0 {
		s.finishCRDLocked(r.crd, r)
	}
}

// finishCRDLocked stops serving r (if any) and takes the cleanup finalizer off the CRD
// name, which deletes it unless other finalizers remain.
func (s *Server) finishCRDLocked(name string, r *resource) {
	if r != nil {
		r.removed = true
		delete(s.resources, r.typ.name())
		s.order = slices.DeleteFunc(s.order, func(x *resource) bool { return x == r })
		s.teardownWatchesLocked(r)
		s.openapi = nil
	}
	old := s.crdRes.objects[name]
	if old == nil {
		return
	}
	obj := mustDecode(old.raw)
	md := jsonobj.Meta(obj)
	fins, _ := md["finalizers"].([]any)
	fins = slices.DeleteFunc(fins, func(f any) bool { return f == crdCleanupFinalizer })
	if len(fins) == 0 {
		// The DELETED event carries the last stored state, finalizer included, as the
		// kube-apiserver's does.
		s.commitLocked(s.crdRes, apiclient.Deleted, nil, old)
		return
	}
	md["finalizers"] = fins
	s.commitLocked(s.crdRes, apiclient.Modified, obj, old)
}

// registerLocked adds a resource to the served ones.
func (s *Server) registerLocked(r *resource) {
	s.resources[r.typ.name()] = r
	s.order = append(s.order, r)
	slices.SortStableFunc(s.order, func(a, b *resource) int {
		if a.typ.Group != b.typ.Group {
			return strings.Compare(a.typ.Group, b.typ.Group)
		}
		return strings.Compare(a.typ.Plural, b.typ.Plural)
	})
	s.openapi = nil
	s.notifyChangeLocked()
}

// teardownWatchesLocked ends the watches open on r now, CRDWatchTeardownDelay from now: the
// end of the stream, without an ERROR event, as when the kube-apiserver destroys a custom
// resource's storage. Watches opened later are not affected.
func (s *Server) teardownWatchesLocked(r *resource) {
	var ws []*watcher
	for _, w := range s.watchers {
		if w.res == r {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return
	}
	end := func() {
		for _, w := range ws {
			w.push(watchCtl{kind: ctlEnd})
		}
	}
	d := s.opts.CRDWatchTeardownDelay
	if d < 0 {
		end()
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		delete(s.teardowns, t)
		s.mu.Unlock()
		end()
	})
	s.teardowns[t] = struct{}{}
}

// refuseTerminatingCreate is the answer to a create of a resource whose CRD is being
// deleted.
func refuseTerminatingCreate(r *resource, name string) *meta.Status {
	return &meta.Status{TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: http.StatusForbidden,
		Reason:  meta.StatusReasonForbidden,
		Message: fmt.Sprintf("%s %q is forbidden: create not allowed while custom resource definition is terminating", r.typ.qualified(), name),
		Details: &meta.StatusDetails{Name: name, Group: r.typ.Group, Kind: r.typ.Plural}}
}
