// Package rbac decides requests as the kube-apiserver's RBAC authorizer does: a user, in
// its groups, may do what the rules of the Roles and ClusterRoles bound to it allow, and
// members of system:masters may do everything. It reads the RBAC objects as the JSON
// shaped values apitest stores, and adds the grants of the kube-apiserver's bootstrap
// policy to every user (discovery, health and version, self reviews), which a fresh
// cluster has as ClusterRoles and ClusterRoleBindings.
package rbac

import (
	"fmt"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// User is who asks: name and groups as the authenticators give them.
type User struct {
	Name   string
	Groups []string
}

// Attributes describe a request: a resource request (Resource set) or a request for a
// non-resource Path.
type Attributes struct {
	Verb        string
	Namespace   string
	Group       string
	Resource    string
	Subresource string
	Name        string
	Path        string // a non-resource request's path
}

// Policy is the RBAC objects the decision reads (as stored: JSON-shaped maps).
type Policy struct {
	ClusterRoles        []map[string]any
	ClusterRoleBindings []map[string]any
	Roles               []map[string]any
	RoleBindings        []map[string]any
}

// Decision is the answer: allowed, and the kube-apiserver's reason (which binding of which
// role allowed it; "" when nothing did).
type Decision struct {
	Allowed bool
	Reason  string
}

// Authorize decides attrs for user under p.
func Authorize(p Policy, user User, attrs Attributes) Decision {
	if slices.Contains(user.Groups, "system:masters") {
		return Decision{Allowed: true}
	}
	for _, g := range bootstrapGrants {
		if slices.Contains(user.Groups, g.group) && g.rule.matches(attrs) {
			return Decision{Allowed: true, Reason: fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of ClusterRole %q to Group %q", g.role, g.role, g.group)}
		}
	}
	clusterRoles := byName(p.ClusterRoles)
	for _, b := range p.ClusterRoleBindings {
		if !bound(b, user, "") {
			continue
		}
		ref := jsonobj.Map(b["roleRef"])
		if jsonobj.Str(ref, "kind") != "ClusterRole" {
			continue
		}
		if role, ok := clusterRoles[jsonobj.Str(ref, "name")]; ok && anyRule(role, attrs) {
			return Decision{Allowed: true, Reason: fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of ClusterRole %q to %s",
				jsonobj.Str(jsonobj.Meta(b), "name"), jsonobj.Str(ref, "name"), subjectOf(b, user, ""))}
		}
	}
	if attrs.Namespace == "" || attrs.Resource == "" {
		return Decision{}
	}
	roles := map[string]map[string]any{}
	for _, r := range p.Roles {
		if jsonobj.Str(jsonobj.Meta(r), "namespace") == attrs.Namespace {
			roles[jsonobj.Str(jsonobj.Meta(r), "name")] = r
		}
	}
	for _, b := range p.RoleBindings {
		if jsonobj.Str(jsonobj.Meta(b), "namespace") != attrs.Namespace || !bound(b, user, attrs.Namespace) {
			continue
		}
		ref := jsonobj.Map(b["roleRef"])
		var role map[string]any
		var ok bool
		switch jsonobj.Str(ref, "kind") {
		case "Role":
			role, ok = roles[jsonobj.Str(ref, "name")]
		case "ClusterRole":
			role, ok = clusterRoles[jsonobj.Str(ref, "name")]
		}
		if ok && anyRule(role, attrs) {
			return Decision{Allowed: true, Reason: fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s",
				jsonobj.Str(jsonobj.Meta(b), "name")+"/"+jsonobj.Str(jsonobj.Meta(b), "namespace"),
				jsonobj.Str(ref, "kind"), jsonobj.Str(ref, "name"), subjectOf(b, user, attrs.Namespace))}
		}
	}
	return Decision{}
}

func byName(objs []map[string]any) map[string]map[string]any {
	m := make(map[string]map[string]any, len(objs))
	for _, o := range objs {
		m[jsonobj.Str(jsonobj.Meta(o), "name")] = o
	}
	return m
}

// bound reports whether a binding's subjects include user. ns is a RoleBinding's
// namespace: a ServiceAccount subject without a namespace means that one.
func bound(b map[string]any, user User, ns string) bool {
	return subjectOf(b, user, ns) != ""
}

// subjectOf names the subject of b that is user, as the authorizer's reason does ("" if
// none is).
func subjectOf(b map[string]any, user User, ns string) string {
	for _, s := range jsonobj.ListAt(b, "subjects") {
		sub := jsonobj.Map(s)
		name := jsonobj.Str(sub, "name")
		switch jsonobj.Str(sub, "kind") {
		case "User":
			if name == user.Name {
				return fmt.Sprintf("User %q", name)
			}
		case "Group":
			if slices.Contains(user.Groups, name) {
				return fmt.Sprintf("Group %q", name)
			}
		case "ServiceAccount":
			sns := jsonobj.Str(sub, "namespace")
			if sns == "" {
				sns = ns
			}
			if sns != "" && user.Name == "system:serviceaccount:"+sns+":"+name {
				return fmt.Sprintf("ServiceAccount %q", name+"/"+sns)
			}
		}
	}
	return ""
}

func anyRule(role map[string]any, attrs Attributes) bool {
	for _, r := range jsonobj.ListAt(role, "rules") {
		if ruleOf(jsonobj.Map(r)).matches(attrs) {
			return true
		}
	}
	return false
}

// rule is a PolicyRule.
type rule struct {
	verbs, apiGroups, resources, resourceNames, nonResourceURLs []string
}

func ruleOf(m map[string]any) rule {
	return rule{verbs: jsonobj.Strings(m["verbs"]), apiGroups: jsonobj.Strings(m["apiGroups"]),
		resources: jsonobj.Strings(m["resources"]), resourceNames: jsonobj.Strings(m["resourceNames"]),
		nonResourceURLs: jsonobj.Strings(m["nonResourceURLs"])}
}

// matches applies the kube-apiserver's rule matching (RuleAllows): "*" matches every verb,
// group and resource; "*/sub" every resource's subresource sub; a URL ending in "*" every
// path it prefixes.
func (r rule) matches(a Attributes) bool {
	if !slices.Contains(r.verbs, "*") && !slices.Contains(r.verbs, a.Verb) {
		return false
	}
	if a.Resource == "" {
		for _, u := range r.nonResourceURLs {
			if u == "*" || u == a.Path || strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*")) {
				return true
			}
		}
		return false
	}
	if !slices.Contains(r.apiGroups, "*") && !slices.Contains(r.apiGroups, a.Group) {
		return false
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	resOK := false
	for _, res := range r.resources {
		if res == "*" || res == combined || a.Subresource != "" && res == "*/"+a.Subresource {
			resOK = true
			break
		}
	}
	if !resOK {
		return false
	}
	return len(r.resourceNames) == 0 || slices.Contains(r.resourceNames, a.Name)
}

// bootstrapGrant is a rule of the kube-apiserver's bootstrap policy: a ClusterRole of that
// name bound by a ClusterRoleBinding of the same name to group.
type bootstrapGrant struct {
	role, group string
	rule        rule
}

// bootstrapGrants are the grants of the bootstrap policy to every authenticated user
// (system:basic-user, system:discovery, system:public-info-viewer) and to everyone else
// (system:public-info-viewer).
var bootstrapGrants = func() []bootstrapGrant {
	public := rule{verbs: []string{"get"}, nonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}}
	return []bootstrapGrant{
		{"system:public-info-viewer", "system:authenticated", public},
		{"system:public-info-viewer", "system:unauthenticated", public},
		{"system:discovery", "system:authenticated", rule{verbs: []string{"get"}, nonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/"}}},
		{"system:basic-user", "system:authenticated", rule{verbs: []string{"create"}, apiGroups: []string{"authorization.k8s.io"}, resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}}},
		{"system:basic-user", "system:authenticated", rule{verbs: []string{"create"}, apiGroups: []string{"authentication.k8s.io"}, resources: []string{"selfsubjectreviews"}}},
	}
}()
