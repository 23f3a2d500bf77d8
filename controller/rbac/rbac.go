package rbac

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Rule is a permission a controller needs: Verbs on Resource of Group, in Namespace.
type Rule struct {
	// Group is the API group ("" for the core group).
	Group string
	// Resource is the plural resource name, with "/subresource" for a subresource
	// ("pods/status").
	Resource string
	// Verbs are the API verbs: get, list, watch, create, update, patch, delete,
	// deletecollection.
	Verbs []string
	// Namespace limits the rule to one namespace (a Role); "" means every namespace and
	// cluster-scoped resources (a ClusterRole).
	Namespace string
}

// String reads "list, watch pods in all namespaces" or "update minideployments.apps.informerkit.io/status
// in namespace ns".
func (r Rule) String() string {
	return strings.Join(r.Verbs, ", ") + " " + qualified(r.Group, r.Resource) + " " + where(r.Namespace)
}

func qualified(group, resource string) string {
	if group == "" {
		return resource
	}
	res, sub, hasSub := strings.Cut(resource, "/")
	if hasSub {
		return res + "." + group + "/" + sub
	}
	return resource + "." + group
}

func where(ns string) string {
	if ns == "" {
		return "in all namespaces"
	}
	return "in namespace " + ns
}

// The usual sets of verbs.
var (
	// ReadVerbs are what an informer and cached reads need.
	ReadVerbs = []string{"get", "list", "watch"}
	// WriteVerbs are what a controller that creates, changes and deletes objects needs.
	WriteVerbs = []string{"create", "update", "patch", "delete"}
	// StatusVerbs are what status writes through the status subresource need.
	StatusVerbs = []string{"get", "update", "patch"}
)

// verbOrder sorts verbs the way kubectl describes roles: reads first.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

func verbRank(v string) int {
	if i := slices.Index(verbOrder, v); i >= 0 {
		return i
	}
	return len(verbOrder)
}

func sortVerbs(vs []string) {
	slices.SortFunc(vs, func(a, b string) int { return cmp.Or(cmp.Compare(verbRank(a), verbRank(b)), strings.Compare(a, b)) })
}

// Merge returns rules with one rule per namespace, group and resource, the verbs of every
// rule about it joined (each once, reads first), sorted by namespace, group and resource.
// A rule for every namespace covers the same rule in one namespace, which is dropped. "*"
// stands for every verb.
func Merge(rules ...Rule) []Rule {
	type key struct{ ns, group, resource string }
	verbs := map[key]map[string]bool{}
	for _, r := range rules {
		k := key{r.Namespace, r.Group, r.Resource}
		if verbs[k] == nil {
			verbs[k] = map[string]bool{}
		}
		for _, v := range r.Verbs {
			verbs[k][v] = true
		}
	}
	var out []Rule
	for k, set := range verbs {
		if k.ns != "" {
			if all := verbs[key{"", k.group, k.resource}]; all != nil {
				for v := range set {
					if all[v] || all["*"] {
						delete(set, v)
					}
				}
			}
		}
		if len(set) == 0 {
			continue
		}
		r := Rule{Namespace: k.ns, Group: k.group, Resource: k.resource}
		for v := range set {
			r.Verbs = append(r.Verbs, v)
		}
		sortVerbs(r.Verbs)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Rule) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Group, b.Group), strings.Compare(a.Resource, b.Resource))
	})
	return out
}

// Validate reports a rule without a resource or verbs.
func (r Rule) Validate() error {
	if r.Resource == "" || len(r.Verbs) == 0 || strings.Count(r.Resource, "/") > 1 {
		return fmt.Errorf("rbac: rule %+v needs a resource (or resource/subresource) and verbs", r)
	}
	return nil
}

// Allows reports whether rules grant verb on resource ("pods", or "pods/status" for a
// subresource) of group in namespace, as the kube-apiserver's RBAC authorizer would with the
// roles Manifest writes: a rule for every namespace covers each namespace and the
// cluster-scoped resources (namespace ""), a rule for one namespace only that namespace;
// "*" stands for every verb. A request across all namespaces has namespace "".
func Allows(rules []Rule, verb, group, resource, namespace string) bool {
	for _, r := range rules {
		if r.Group != group || r.Resource != resource || (r.Namespace != "" && r.Namespace != namespace) {
			continue
		}
		if slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*") {
			return true
		}
	}
	return false
}
