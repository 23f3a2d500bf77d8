package apitest

import (
	"net/http"
	"slices"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// builtinResources are the kube-apiserver's resources, read from kubeschema's table (which
// e2e/tools/schemagen generates from a recording of the real server, checked by e2e's
// TestKubeAPIServerRecording): one ResourceType per group and resource, a resource served
// at several versions (autoscaling's horizontalpodautoscalers) stored at its preferred one.
// apitest's own handling is added where it has one: the create-only resources' answers, and
// CustomResourceDefinitions (crdserve.go).
func builtinResources() []ResourceType {
	var out []ResourceType
	index := map[string]int{}
	for _, kr := range kubeschema.Resources() {
		key := kr.Group + "/" + kr.Resource
		if i, ok := index[key]; ok {
			t := &out[i]
			if t.versions == nil {
				t.versions = []string{t.Version}
			}
			t.versions = append(t.versions, kr.Version)
			continue
		}
		index[key] = len(out)
		out = append(out, fromTable(kr))
	}
	return out
}

// createHandlers are the answers of the create-only resources apitest computes (reviews
// from its authentication and authorization: authn.go, authz.go, tokens.go); the others
// answer what they were sent (reviewEcho).
var createHandlers = map[string]func(s *Server, w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any){
	"/bindings": (*Server).createBinding,
	"authorization.k8s.io/selfsubjectaccessreviews":  (*Server).createSelfAccessReview,
	"authorization.k8s.io/selfsubjectrulesreviews":   (*Server).createRulesReview,
	"authorization.k8s.io/subjectaccessreviews":      (*Server).createSubjectAccessReview,
	"authorization.k8s.io/localsubjectaccessreviews": (*Server).createSubjectAccessReview,
	"authentication.k8s.io/tokenreviews":             (*Server).createTokenReview,
	"authentication.k8s.io/selfsubjectreviews":       (*Server).createSelfSubjectReview,
}

// fromTable is the ResourceType of one resource of the table.
func fromTable(kr kubeschema.Resource) ResourceType {
	t := ResourceType{Group: kr.Group, Version: kr.Version, Kind: kr.Kind, Plural: kr.Resource, Singular: kr.Singular,
		ShortNames: kr.ShortNames, Namespaced: kr.Namespaced, Categories: kr.Categories,
		generation: kr.Generation, allowCreateOnUpdate: kr.CreateOnUpdate, names: kr.Names,
		verbs: kr.Verbs, storageVersionHash: kr.StorageVersionHash, tableColumns: kr.Columns}
	t.labels.Extra, t.labels.Paths, t.labels.Refusal = kr.FieldLabels, kr.FieldLabelPaths, kr.FieldLabelError
	for _, sub := range kr.Subresources {
		if sub.Name == "status" {
			t.StatusSubresource = true
			continue
		}
		sr := subresource{name: sub.Name, group: sub.Group, version: sub.Version, kind: sub.Kind, verbs: sub.Verbs}
		if sr.kind == kr.Kind && sr.group == "" {
			sr.kind = "" // the parent's
		}
		t.subs = append(t.subs, sr)
	}
	if kr.Group == crdGroup && kr.Resource == "customresourcedefinitions" {
		t.builtinJSON = true // JSON only (crdserve.go)
	}
	if slices.Equal(kr.Verbs, []string{"create"}) {
		t.createOnly = createHandlers[kr.Group+"/"+kr.Resource]
		if t.createOnly == nil {
			t.createOnly = (*Server).reviewEcho
		}
	}
	return t
}
