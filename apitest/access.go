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
