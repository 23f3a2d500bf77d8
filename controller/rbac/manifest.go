package rbac

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ManifestOptions are the optional settings of Manifest.
type ManifestOptions struct {
	// ServiceAccount, if set, adds the bindings of the roles to this service account of
	// ServiceAccountNamespace (default "default"). Default none: roles only.
	ServiceAccount          string
	ServiceAccountNamespace string
}

// Manifest returns the RBAC objects that grant rules, as YAML documents for kubectl apply:
// a ClusterRole name with the rules for every namespace, and a Role name in each namespace
// that has rules of its own (the leader election Lease), with their bindings if
// opts.ServiceAccount is set. Rules of one group with the same verbs share one entry.
func Manifest(name string, rules []Rule, opts ManifestOptions) ([]byte, error) {
	if name == "" {
		return nil, errors.New("rbac: Manifest needs a name")
	}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	if opts.ServiceAccountNamespace == "" {
		opts.ServiceAccountNamespace = "default"
	}
	byNS := map[string][]Rule{}
	var namespaces []string
	for _, r := range Merge(rules...) {
		if _, ok := byNS[r.Namespace]; !ok && r.Namespace != "" {
			namespaces = append(namespaces, r.Namespace)
		}
		byNS[r.Namespace] = append(byNS[r.Namespace], r)
	}
	slices.Sort(namespaces)
	var docs []any
	subject := []subject{{Kind: "ServiceAccount", Name: opts.ServiceAccount, Namespace: opts.ServiceAccountNamespace}}
	docs = append(docs, role{APIVersion: rbacV1, Kind: "ClusterRole", Metadata: objectMeta{Name: name}, Rules: policyRules(byNS[""])})
	if opts.ServiceAccount != "" {
		docs = append(docs, binding{APIVersion: rbacV1, Kind: "ClusterRoleBinding", Metadata: objectMeta{Name: name},
			RoleRef: roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}, Subjects: subject})
	}
	for _, ns := range namespaces {
		docs = append(docs, role{APIVersion: rbacV1, Kind: "Role", Metadata: objectMeta{Name: name, Namespace: ns}, Rules: policyRules(byNS[ns])})
		if opts.ServiceAccount != "" {
			docs = append(docs, binding{APIVersion: rbacV1, Kind: "RoleBinding", Metadata: objectMeta{Name: name, Namespace: ns},
				RoleRef: roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}, Subjects: subject})
		}
	}
	var buf bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

const rbacV1 = "rbac.authorization.k8s.io/v1"

type objectMeta struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace,omitempty"`
}

type role struct {
	APIVersion string       `yaml:"apiVersion"`
	Kind       string       `yaml:"kind"`
	Metadata   objectMeta   `yaml:"metadata"`
	Rules      []policyRule `yaml:"rules"`
}

type policyRule struct {
	APIGroups flowList `yaml:"apiGroups"`
	Resources flowList `yaml:"resources"`
	Verbs     flowList `yaml:"verbs"`
}

type binding struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	RoleRef    roleRef    `yaml:"roleRef"`
	Subjects   []subject  `yaml:"subjects"`
}

type roleRef struct {
	APIGroup string `yaml:"apiGroup"`
	Kind     string `yaml:"kind"`
	Name     string `yaml:"name"`
}

type subject struct {
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// flowList is a list written on one line: [get, list, watch].
type flowList []string

// MarshalYAML writes the list in flow style.
func (l flowList) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range l {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	}
	return n, nil
}

// policyRules turns merged rules into PolicyRules, one per group and set of verbs.
func policyRules(rules []Rule) []policyRule {
	out := []policyRule{}
	for _, r := range rules {
		verbs := strings.Join(r.Verbs, ",")
		i := slices.IndexFunc(out, func(p policyRule) bool {
			return p.APIGroups[0] == r.Group && strings.Join(p.Verbs, ",") == verbs
		})
		if i < 0 {
			out = append(out, policyRule{APIGroups: flowList{r.Group}, Verbs: flowList(slices.Clone(r.Verbs))})
			i = len(out) - 1
		}
		out[i].Resources = append(out[i].Resources, r.Resource)
	}
	return out
}
