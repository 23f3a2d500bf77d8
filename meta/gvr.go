package meta

import (
	"fmt"
	"strings"
)

// GroupVersion is an API group and version; the core group is "".
type GroupVersion struct {
	Group   string
	Version string
}

// String returns the apiVersion form: "v1" for the core group, "apps/v1" otherwise.
func (gv GroupVersion) String() string {
	if gv.Group == "" {
		return gv.Version
	}
	return gv.Group + "/" + gv.Version
}

// ParseGroupVersion parses an apiVersion such as "v1" or "apps/v1".
func ParseGroupVersion(apiVersion string) (GroupVersion, error) {
	if apiVersion == "" {
		return GroupVersion{}, nil
	}
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		return GroupVersion{Version: apiVersion}, nil
	}
	if group == "" || version == "" || strings.Contains(version, "/") {
		return GroupVersion{}, fmt.Errorf("meta: apiVersion %q is not of the form group/version", apiVersion)
	}
	return GroupVersion{Group: group, Version: version}, nil
}

// GroupVersionResource names a resource collection, e.g. {"apps", "v1", "deployments"}.
type GroupVersionResource struct {
	Group    string
	Version  string
	Resource string
}

// GroupVersion returns the group and version of r.
func (r GroupVersionResource) GroupVersion() GroupVersion {
	return GroupVersion{Group: r.Group, Version: r.Version}
}

// String returns "resource.version.group", or "resource.version" for the core group.
func (r GroupVersionResource) String() string {
	if r.Group == "" {
		return r.Resource + "." + r.Version
	}
	return r.Resource + "." + r.Version + "." + r.Group
}

// GroupVersionKind names a kind in a group and version, e.g. {"apps", "v1", "Deployment"}.
type GroupVersionKind struct {
	Group   string
	Version string
	Kind    string
}

// GroupVersion returns the group and version of k.
func (k GroupVersionKind) GroupVersion() GroupVersion {
	return GroupVersion{Group: k.Group, Version: k.Version}
}

// String returns "group/version, Kind=kind".
func (k GroupVersionKind) String() string {
	return k.GroupVersion().String() + ", Kind=" + k.Kind
}
