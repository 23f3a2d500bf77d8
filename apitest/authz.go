package apitest

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/rbac"
	"github.com/informerkit/informerkit/meta"
)

// Authorization, as a kube-apiserver with --authorization-mode=RBAC: members of
// system:masters (User, and a server without authentication) may do everything but what
// Deny covers; any other user (Options.Tokens, a client certificate, a service account
// token) what the stored Roles, ClusterRoles and their bindings grant it, plus the
// bootstrap policy's discovery, health and self-review grants. SubjectAccessReviews and
// their local and self forms answer from the same decision.

// rbacPolicy reads the stored RBAC objects.
func (s *Server) rbacPolicy() rbac.Policy {
	list := func(resource string) []map[string]any {
		objs, _, err := s.List(resource, "")
		if err != nil {
			return nil
		}
		out := make([]map[string]any, len(objs))
		for i, o := range objs {
			out[i] = o
		}
		return out
	}
	const g = ".rbac.authorization.k8s.io"
	return rbac.Policy{ClusterRoles: list("clusterroles" + g), ClusterRoleBindings: list("clusterrolebindings" + g),
		Roles: list("roles" + g), RoleBindings: list("rolebindings" + g)}
}

func isMaster(u UserInfo) bool { return slices.Contains(u.Groups, "system:masters") }

// decide authorizes attrs for u: RBAC for users outside system:masters, and the Deny
// rules for everyone.
func (s *Server) decide(u UserInfo, attrs rbac.Attributes) rbac.Decision {
	if attrs.Resource != "" && s.isDenied(Verb(attrs.Verb), s.resourceName(attrs.Group, attrs.Resource), attrs.Subresource, attrs.Namespace) {
		return rbac.Decision{}
	}
	if isMaster(u) {
		return rbac.Decision{Allowed: true}
	}
	return rbac.Authorize(s.rbacPolicy(), rbac.User{Name: u.Name, Groups: u.Groups}, attrs)
}

// resourceName is the name() of the served resource group/plural (plural itself if none).
func (s *Server) resourceName(group, plural string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.order {
		if r.typ.Group == group && r.typ.Plural == plural {
			return r.typ.name()
		}
	}
	return plural
}

// authorizeRequest returns the 403 of a request u may not make (nil if it may). Members
// of system:masters go through Deny alone (forbidden).
func (s *Server) authorizeRequest(r *http.Request, u UserInfo, ri *reqInfo) *meta.Status {
	if isMaster(u) {
		return nil
	}
	verb := string(rbacVerb(r, ri))
	if ri == nil {
		if s.decide(u, rbac.Attributes{Verb: verb, Path: r.URL.Path}).Allowed {
			return nil
		}
		return apierr.New(http.StatusForbidden, meta.StatusReasonForbidden,
			fmt.Sprintf("forbidden: User %q cannot %s path %q", u.Name, verb, r.URL.Path))
	}
	t := ri.res.typ
	attrs := rbac.Attributes{Verb: verb, Namespace: ri.namespace, Group: t.Group, Resource: t.Plural, Subresource: ri.sub, Name: ri.name}
	if s.decide(u, attrs).Allowed {
		return nil
	}
	res := t.Plural
	if ri.sub != "" {
		res += "/" + ri.sub
	}
	scope := "at the cluster scope"
	if ri.namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", ri.namespace)
	}
	prefix := t.qualified() + " is forbidden: "
	if ri.name != "" {
		prefix = fmt.Sprintf("%s %q is forbidden: ", t.qualified(), ri.name)
	}
	st := apierr.New(http.StatusForbidden, meta.StatusReasonForbidden,
		prefix+fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", u.Name, verb, res, t.Group, scope))
	st.Details = &meta.StatusDetails{Name: ri.name, Group: t.Group, Kind: t.Plural}
	return st
}

// rbacVerb is the authorizer's verb of a request: the resource verb, or the lower-cased
// HTTP method of a non-resource request (get for GET and HEAD).
func rbacVerb(r *http.Request, ri *reqInfo) Verb {
	if ri != nil {
		return ri.verb
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return Verb(r.Method)
}

// reviewAttributes reads a review's spec.resourceAttributes or nonResourceAttributes.
func reviewAttributes(spec map[string]any) (rbac.Attributes, []apierr.FieldError) {
	ra, nra := jsonobj.Map(spec["resourceAttributes"]), jsonobj.Map(spec["nonResourceAttributes"])
	switch {
	case ra != nil && nra != nil:
		return rbac.Attributes{}, []apierr.FieldError{apierr.InvalidValue("spec.nonResourceAttributes", nra, `cannot be specified in combination with resourceAttributes`)}
	case ra == nil && nra == nil:
		return rbac.Attributes{}, []apierr.FieldError{apierr.InvalidValue("spec.resourceAttributes", nil, `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
	case nra != nil:
		return rbac.Attributes{Verb: jsonobj.Str(nra, "verb"), Path: jsonobj.Str(nra, "path")}, nil
	}
	return rbac.Attributes{Verb: jsonobj.Str(ra, "verb"), Namespace: jsonobj.Str(ra, "namespace"), Group: jsonobj.Str(ra, "group"),
		Resource: jsonobj.Str(ra, "resource"), Subresource: jsonobj.Str(ra, "subresource"), Name: jsonobj.Str(ra, "name")}, nil
}

// reviewStatus is a SubjectAccessReview's status for a decision.
func reviewStatus(d rbac.Decision) map[string]any {
	st := map[string]any{"allowed": d.Allowed}
	if d.Reason != "" {
		st["reason"] = d.Reason
	}
	return st
}

// answerReview writes a review back with its status (201), as the kube-apiserver does:
// nothing is stored, and the metadata is the request's (v1.36.3 answers "metadata":{}, with
// no creationTimestamp at all).
func answerReview(w http.ResponseWriter, obj map[string]any, status map[string]any) {
	obj["status"] = status
	if jsonobj.Map(obj["metadata"]) == nil {
		obj["metadata"] = map[string]any{}
	}
	writeBody(w, outputOf(w), http.StatusCreated, mustJSON(obj))
}

// createSubjectAccessReview answers a SubjectAccessReview (cluster-scoped) or a
// LocalSubjectAccessReview (namespaced: its resourceAttributes.namespace is the URL's):
// may spec.user, in spec.groups, do what the attributes say.
func (s *Server) createSubjectAccessReview(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	spec := jsonobj.Map(obj["spec"])
	attrs, errs := reviewAttributes(spec)
	user := UserInfo{Name: jsonobj.Str(spec, "user"), Groups: jsonobj.Strings(spec["groups"])}
	if user.Name == "" && len(user.Groups) == 0 {
		errs = append(errs, apierr.InvalidValue("spec.user", "", `at least one of user or group must be specified`))
	}
	if ri.namespace != "" {
		switch {
		case attrs.Path != "":
			errs = append(errs, apierr.InvalidValue("spec.nonResourceAttributes", jsonobj.Map(spec["nonResourceAttributes"]), `disallowed on this kind of request`))
		case attrs.Namespace == "":
			attrs.Namespace = ri.namespace
			jsonobj.Map(spec["resourceAttributes"])["namespace"] = ri.namespace
		case attrs.Namespace != ri.namespace:
			errs = append(errs, apierr.InvalidValue("spec.resourceAttributes.namespace", attrs.Namespace, `must match metadata.namespace`))
		}
	}
	if len(errs) > 0 {
		writeStatus(w, apierr.Invalid(ri.res.typ.Kind, ri.res.typ.Group, "", errs))
		return
	}
	answerReview(w, obj, reviewStatus(s.decide(user, attrs)))
}

// createSelfAccessReview answers a SelfSubjectAccessReview for the requesting user.
func (s *Server) createSelfAccessReview(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	// As the kube-apiserver, the answer carries the managedFields of the create (nothing is
	// stored).
	var wo writeOptions
	if st := requestManager(r, &wo, "CreateOptions"); st != nil {
		writeStatus(w, st)
		return
	}
	s.mu.Lock()
	s.trackLocked(ri.res, "", nil, obj, wo)
	s.mu.Unlock()
	attrs, errs := reviewAttributes(jsonobj.Map(obj["spec"]))
	if len(errs) > 0 {
		writeStatus(w, apierr.Invalid(ri.res.typ.Kind, ri.res.typ.Group, "", errs))
		return
	}
	u := requestUser(r)
	d := s.decide(u, attrs)
	if d.Allowed && isMaster(u) && s.hasDenyRules() {
		// With Deny rules the client is a user whose roles grant everything else; RBAC
		// names the binding that allows.
		d.Reason = "apitest: allowed, as everything no Deny rule covers"
	}
	answerReview(w, obj, reviewStatus(d))
}

func (s *Server) hasDenyRules() bool {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return len(s.denied) > 0
}

// createSelfSubjectReview answers a SelfSubjectReview: who the requesting user is.
func (s *Server) createSelfSubjectReview(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	answerReview(w, obj, map[string]any{"userInfo": userJSON(requestUser(r))})
}
