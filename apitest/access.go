package apitest

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// User is the name the server gives its one client in authorization messages and reviews.
const User = "apitest"

// AccessRule names requests for Deny: a verb (VerbAny: every verb) on a resource ("" every
// resource; otherwise any name the request filters take, "pods/status" for a subresource:
// without one, its subresources are covered too) in a namespace ("" every namespace).
type AccessRule struct {
	Verb      Verb
	Resource  string
	Namespace string
}

// accessRule is an AccessRule resolved against the served resources.
type accessRule struct {
	verb                  Verb
	resource, subresource string // resource: a resource's name(); "" every resource
	namespace             string
	id                    int
}

// Deny makes the server refuse what rule describes, as an RBAC authorizer that does not
// grant it: such requests are answered 403 Forbidden with the kube-apiserver's message, and
// SelfSubjectAccessReviews about them answer allowed: false. Everything else stays allowed.
// allow lifts this denial.
func (s *Server) Deny(rule AccessRule) (allow func(), err error) {
	r := accessRule{verb: rule.Verb, namespace: rule.Namespace}
	if rule.Resource != "" {
		if r.resource, r.subresource, err = s.resolveRef(rule.Resource); err != nil {
			return nil, err
		}
	}
	s.logMu.Lock()
	s.accessSeq++
	r.id = s.accessSeq
	s.denied = append(s.denied, r)
	s.logMu.Unlock()
	return func() {
		s.logMu.Lock()
		defer s.logMu.Unlock()
		s.denied = slices.DeleteFunc(s.denied, func(x accessRule) bool { return x.id == r.id })
	}, nil
}

// isDenied reports whether a Deny rule covers verb on resource (name()) and sub in ns.
func (s *Server) isDenied(verb Verb, resource, sub, ns string) bool {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	for _, r := range s.denied {
		if (r.verb == VerbAny || r.verb == verb) && (r.resource == "" || r.resource == resource) &&
			(r.subresource == "" || r.subresource == sub) && (r.namespace == "" || r.namespace == ns) {
			return true
		}
	}
	return false
}

// forbidden is the answer to a request a Deny rule covers (nil if none does): the
// kube-apiserver's 403, whose message names the user, verb, resource, group and scope.
func (s *Server) forbidden(ri *reqInfo) *meta.Status {
	t := ri.res.typ
	if !s.isDenied(ri.verb, t.name(), ri.sub, ri.namespace) {
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
	reason := fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", User, ri.verb, res, t.Group, scope)
	prefix := t.qualified() + " is forbidden: "
	if ri.name != "" {
		prefix = fmt.Sprintf("%s %q is forbidden: ", t.qualified(), ri.name)
	}
	st := apierr.New(http.StatusForbidden, meta.StatusReasonForbidden, prefix+reason)
	st.Details = &meta.StatusDetails{Name: ri.name, Group: t.Group, Kind: t.Plural}
	return st
}

// accessReviewStatus answers a SelfSubjectAccessReview's resourceAttributes: allowed unless
// a Deny rule covers them. A resource apitest does not serve is allowed (as everything is)
// unless a rule covers every resource.
func (s *Server) accessReviewStatus(attrs map[string]any) map[string]any {
	str := func(k string) string { v, _ := attrs[k].(string); return v }
	resource := str("resource")
	s.mu.Lock()
	for _, r := range s.order {
		if r.typ.Group == str("group") && r.typ.Plural == str("resource") {
			resource = r.typ.name()
			break
		}
	}
	s.mu.Unlock()
	if s.isDenied(Verb(str("verb")), resource, str("subresource"), str("namespace")) {
		return map[string]any{"allowed": false} // RBAC gives no reason when nothing grants it
	}
	s.logMu.Lock()
	user := len(s.denied) > 0
	s.logMu.Unlock()
	if !user {
		// No Deny rule: the client is an administrator, as the kube-apiserver answers a
		// member of system:masters, whom everything is allowed without a reason.
		return map[string]any{"allowed": true}
	}
	// With Deny rules the client is a user whose roles grant everything else; RBAC names
	// the binding that allows ("RBAC: allowed by ClusterRoleBinding ...").
	return map[string]any{"allowed": true, "reason": "apitest: allowed, as everything no Deny rule covers"}
}
