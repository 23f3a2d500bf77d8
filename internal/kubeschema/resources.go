package kubeschema

// Resource is one resource the kube-apiserver serves, as its discovery lists it (recorded
// from the real server, see docs/kubeschema.md), with what serving it takes that discovery
// does not say.
type Resource struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	// Kind is the kind of its objects (in Group and Version).
	Kind       string   `json:"kind"`
	Namespaced bool     `json:"namespaced,omitempty"`
	Singular   string   `json:"singular"`
	Verbs      []string `json:"verbs"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
	// StorageVersionHash is what legacy discovery lists (empty for resources without
	// storage).
	StorageVersionHash string        `json:"storageVersionHash,omitempty"`
	Subresources       []Subresource `json:"subresources,omitempty"`
	// Generation: a create sets metadata.generation (the strategy tracks spec changes).
	Generation bool `json:"generation,omitempty"`
	// CreateOnUpdate: an update of a missing object creates it.
	CreateOnUpdate bool `json:"createOnUpdate,omitempty"`
	// Names is the rule names follow: "dns-subdomain", "dns-label", "dns-1035-label",
	// "path-segment", or "" for a rule of the kind's own (IP addresses, group-qualified
	// names) or a resource without storage.
	Names string `json:"names,omitempty"`
	// FieldLabels are the field selectors taken beyond metadata.name and
	// metadata.namespace; FieldLabelPaths maps those that are not the JSON path they
	// select to that path.
	FieldLabels     []string          `json:"fieldLabels,omitempty"`
	FieldLabelPaths map[string]string `json:"fieldLabelPaths,omitempty"`
	// FieldLabelError words the refusal of any other field selector when the kind has a
	// field label conversion of its own ("{label}" is the label); empty for the generic
	// "is not a known field selector".
	FieldLabelError string `json:"fieldLabelError,omitempty"`
	// Columns are the column definitions of its Tables (nil: no list verb).
	Columns []Column `json:"columns,omitempty"`
}

// Subresource is one subresource of a Resource.
type Subresource struct {
	Name string `json:"name"`
	// Group, Version and Kind are the kind it takes and answers; Group and Version are
	// empty when they are the parent's.
	Group   string   `json:"group,omitempty"`
	Version string   `json:"version,omitempty"`
	Kind    string   `json:"kind"`
	Verbs   []string `json:"verbs"`
}

// Column is a Table column definition.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Priority    int    `json:"priority,omitempty"`
	Description string `json:"description,omitempty"`
}

// Resources returns every resource of the pinned kube-apiserver in its discovery order:
// groups by priority (the core group first), a group's versions preferred first, the
// resources of a version by name.
func Resources() []Resource { return load().Resources }
