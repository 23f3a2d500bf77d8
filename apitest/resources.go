package apitest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/admission"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/apitest/internal/printers"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// ResourceType describes one resource collection the server serves. The built-in resources
// are registered by NewServer; AddResource registers more at run time, as installing a
// CustomResourceDefinition would.
type ResourceType struct {
	// Group is the API group ("" for the core group).
	Group string
	// Version is the API version, e.g. "v1".
	Version string
	// Kind is the object kind, e.g. "Widget". The list kind is Kind+"List".
	Kind string
	// Plural is the resource name in URLs, e.g. "widgets".
	Plural string
	// Singular defaults to the lower-cased Kind.
	Singular string
	// ShortNames are the aliases kubectl accepts, e.g. "wd".
	ShortNames []string
	// Namespaced says whether objects live in a namespace.
	Namespaced bool
	// StatusSubresource serves <object>/status: an update of the main resource then keeps the
	// stored status, and an update of /status changes nothing but the status.
	StatusSubresource bool
	// Categories are the kubectl categories ("all") the resource belongs to.
	Categories []string
	// OpenAPIV3Schema is the schema of a resource registered with AddResource, as a
	// CustomResourceDefinition version's schema.openAPIV3Schema decoded from JSON (nil:
	// none). Server-side apply merges lists and maps by its x-kubernetes-list-type,
	// -list-map-keys and -map-type (without one, objects are granular maps and lists are
	// atomic), and /openapi/v3 publishes it (kubectl explain shows it).
	OpenAPIV3Schema map[string]any

	// generation: metadata.generation is set to 1 on create and bumped when anything other
	// than metadata (and status, with a status subresource) changes.
	generation bool
	// allowCreateOnUpdate: an update of a missing object creates it (leases, events).
	allowCreateOnUpdate bool
	// names is the rule of names (admission.Names*; "" a rule of the kind's own).
	names string
	// labels are the field selectors taken beyond metadata.name and metadata.namespace,
	// and how others are refused.
	labels selector.Labels
	// versions are the versions served from the one storage at Version, preferred first
	// (nil: Version only; autoscaling's horizontalpodautoscalers are served at v2 and v1).
	versions []string
	// storageVersionHash is what legacy discovery lists.
	storageVersionHash string
	// tableColumns are the kube-apiserver's Table columns of a built-in resource.
	tableColumns []kubeschema.Column
	// custom: registered by AddResource (JSON only, items of lists keep apiVersion/kind).
	custom bool
	// columns are a CRD version's additionalPrinterColumns (custom resources' Tables).
	columns []printers.CustomColumn
	// builtinJSON: a built-in kind apitest has no protobuf schema for (served as JSON; items
	// of lists carry no apiVersion and kind, as for every built-in kind).
	builtinJSON bool
	// verbs overrides the verbs discovery lists (nil: all); others answer 405.
	verbs []string
	// subs are the subresources beyond status (subresources.go).
	subs []subresource
	// createOnly serves a resource without storage that only takes POSTs (reviews, bindings).
	createOnly func(s *Server, w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any)
}

// GroupVersion returns the group and version of the resource.
func (t ResourceType) GroupVersion() meta.GroupVersion {
	return meta.GroupVersion{Group: t.Group, Version: t.Version}
}

// GroupVersionResource returns the resource's GroupVersionResource.
func (t ResourceType) GroupVersionResource() meta.GroupVersionResource {
	return meta.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Plural}
}

// name is the resource's canonical name in apitest: "plural" for the core group,
// "plural.group" otherwise (as kubectl writes it).
func (t ResourceType) name() string {
	if t.Group == "" {
		return t.Plural
	}
	return t.Plural + "." + t.Group
}

// qualified is the "resource.group" form used in error messages ("deployments.apps").
func (t ResourceType) qualified() string { return t.name() }

func (t *ResourceType) validate() error {
	if t.Version == "" || t.Kind == "" || t.Plural == "" {
		return fmt.Errorf("apitest: resource type needs Version, Kind and Plural (got %+v)", *t)
	}
	if strings.ToLower(t.Plural) != t.Plural || strings.ContainsAny(t.Plural, "./ ") {
		return fmt.Errorf("apitest: resource plural %q must be lower case without dots or slashes", t.Plural)
	}
	if t.Singular == "" {
		t.Singular = strings.ToLower(t.Kind)
	}
	return nil
}

// lookupLocked resolves a resource name: "configmaps", "cm", "deployments.apps",
// "deployments.v1.apps", a Kind ("ConfigMap"), or "" (nil: every resource). s.mu held.
func (s *Server) lookupLocked(name string) (*resource, error) {
	if name == "" {
		return nil, nil
	}
	if r, ok := s.resources[name]; ok {
		return r, nil
	}
	var found []*resource
	first, rest, dotted := strings.Cut(name, ".")
	for _, r := range s.order {
		t := r.typ
		match := false
		if dotted {
			if t.Plural == first || t.Singular == first || contains(t.ShortNames, first) {
				match = rest == t.Group || rest == t.Version+"."+t.Group || (t.Group == "" && rest == t.Version)
			}
		} else {
			match = t.Plural == name || t.Singular == name || t.Kind == name || contains(t.ShortNames, name)
		}
		if match {
			found = append(found, r)
		}
	}
	if len(found) > 1 && found[0].typ.Group == "" {
		found = found[:1] // as kubectl: the core group wins (events, "ev")
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("apitest: no resource %q is served", name)
	default:
		var names []string
		for _, r := range found {
			names = append(names, r.typ.name())
		}
		return nil, fmt.Errorf("apitest: resource name %q is ambiguous: %s", name, strings.Join(names, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// AddResource registers a resource at run time, as installing a CustomResourceDefinition
// would: it appears in discovery and can be used at once. Custom resources always carry
// metadata.generation. Registering the same group and plural twice is an error.
func (s *Server) AddResource(t ResourceType) error {
	if err := t.validate(); err != nil {
		return err
	}
	t.generation = true
	t.custom = true
	t.names = admission.NamesSubdomain
	// The apiextensions server converts field labels itself: any field but metadata.name
	// and metadata.namespace is "field label not supported", as for pods.
	t.labels.Refusal = selector.RefusalNotSupported
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addResourceLocked(t)
}

func (s *Server) addResourceLocked(t ResourceType) error {
	if err := t.validate(); err != nil {
		return err
	}
	if _, ok := s.resources[t.name()]; ok {
		return fmt.Errorf("apitest: resource %s is already registered", t.name())
	}
	for _, r := range s.order {
		if r.typ.Group == t.Group && r.typ.Kind == t.Kind {
			return fmt.Errorf("apitest: kind %s is already served by %s", t.Kind, r.typ.name())
		}
	}
	r := newResource(t, s.opts.HistorySize, s.rv)
	s.resources[t.name()] = r
	s.order = append(s.order, r)
	sort.SliceStable(s.order, func(i, j int) bool {
		if s.order[i].typ.Group != s.order[j].typ.Group {
			return s.order[i].typ.Group < s.order[j].typ.Group
		}
		return s.order[i].typ.Plural < s.order[j].typ.Plural
	})
	s.notifyChangeLocked()
	return nil
}

// Resources returns the resource types the server serves.
func (s *Server) Resources() []ResourceType {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ResourceType, 0, len(s.order))
	for _, r := range s.order {
		out = append(out, r.typ)
	}
	return out
}

// kindKey is the kind as kubeschema.Field.DefaultKinds names it ("v1/Pod", "apps/v1/Deployment").
func (t *ResourceType) kindKey() string {
	if t.Group == "" {
		return t.Version + "/" + t.Kind
	}
	return t.Group + "/" + t.Version + "/" + t.Kind
}

// gvk is the kind of the resource's objects.
func (t *ResourceType) gvk() meta.GroupVersionKind {
	return meta.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
}

// schemaType is the kubeschema type of a built-in resource's objects (nil for others).
func (r *resource) schemaType() *kubeschema.Type {
	if !r.builtin() {
		return nil
	}
	k, _ := kubeschema.ForKind(r.typ.Group, r.typ.Version, r.typ.Kind)
	return k.Type
}

// builtin reports whether the resource's kind has a protobuf schema (the built-in kinds).
func (r *resource) builtin() bool {
	r.builtinOnce.Do(func() {
		_, r.isBuiltin = kubeschema.ForKind(r.typ.Group, r.typ.Version, r.typ.Kind)
		r.isBuiltin = r.isBuiltin && !r.typ.custom
	})
	return r.isBuiltin
}

// mediaTypes are the media types the resource reads and writes, in the server's order.
func (r *resource) mediaTypes() []string { return negotiation.MediaTypes(r.builtin()) }
